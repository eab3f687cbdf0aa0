// The one moment a full key is visible: shown with a copy button and a plain warning that it will not be
// shown again (the server keeps only its hash and hint).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CreatedKey } from '../api/types';

async function copyText(text: string, fallbackInput: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API needs a secure context (https or localhost); selecting the text still lets people copy.
    fallbackInput?.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

export function NewKeyPanel(props: { created: CreatedKey; onDone(): void }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<boolean | null>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, [props.created.key]);
  return (
    <section class="panel new-key" aria-labelledby="new-key-title" role="region">
      <h3 id="new-key-title">Key “{props.created.name}” created</h3>
      <p class="warning-text">
        <strong>Copy it now: you will not see this key again.</strong> Only its hint ({props.created.hint}) is kept.
      </p>
      <div class="row">
        <label for="new-key-value" class="visually-hidden">
          New API key
        </label>
        <input id="new-key-value" ref={input} class="key-value" readOnly value={props.created.key} spellcheck={false} />
        <button
          type="button"
          class="primary"
          onClick={async () => setCopied(await copyText(props.created.key, input.current))}
        >
          Copy
        </button>
        <button type="button" onClick={props.onDone}>
          Done
        </button>
      </div>
      <p aria-live="polite" class="muted">
        {copied === true
          ? 'Copied to the clipboard.'
          : copied === false
            ? 'Copy failed: select the key and copy it by hand.'
            : ''}
      </p>
    </section>
  );
}
