// Drop an image (or pick one with the keyboard-reachable file input inside) to search with it. The file is
// read locally into a data URI: the server takes image_base64 in that form.
import { useState } from 'preact/hooks';

const ACCEPTED = ['image/jpeg', 'image/png', 'image/webp'];
const MAX_BYTES = 20 * 1024 * 1024;

function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error('The file could not be read'));
    r.readAsDataURL(file);
  });
}

export function ImageDropZone(props: {
  disabled?: boolean;
  onImage(dataUri: string, name: string): void;
  onError(message: string): void;
}) {
  const [over, setOver] = useState(false);
  const take = async (file: File | undefined) => {
    if (!file) return;
    if (!ACCEPTED.includes(file.type))
      return props.onError(
        `Expected a JPEG, PNG or WEBP image but received ${file.type || 'an unknown type'} (${file.name}).`,
      );
    if (file.size > MAX_BYTES) return props.onError(`The image is over 20 MB (${file.name}).`);
    try {
      props.onImage(await readAsDataUrl(file), file.name);
    } catch (e) {
      props.onError((e as Error).message);
    }
  };
  return (
    <label
      class={`dropzone${over ? ' over' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        void take(e.dataTransfer?.files[0]);
      }}
    >
      <span>
        Drop an image here to search with it, or <u>choose a file</u> (JPEG, PNG, WEBP)
      </span>
      <input
        type="file"
        accept={ACCEPTED.join(',')}
        disabled={props.disabled}
        class="visually-hidden"
        onChange={(e) => {
          const input = e.target as HTMLInputElement;
          void take(input.files?.[0]);
          input.value = '';
        }}
      />
    </label>
  );
}
