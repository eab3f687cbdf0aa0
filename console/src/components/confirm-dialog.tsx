// A modal confirmation on the native <dialog> element: focus is trapped and Escape cancels, for free.
import { useEffect, useRef } from 'preact/hooks';

export interface ConfirmProps {
  open: boolean;
  title: string;
  message: string;
  confirmLabel: string;
  danger?: boolean;
  onConfirm(): void;
  onCancel(): void;
}

export function ConfirmDialog(p: ConfirmProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (p.open && !d.open) d.showModal();
    if (!p.open && d.open) d.close();
  }, [p.open]);
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        p.onCancel();
      }}
    >
      <h2 id="confirm-title">{p.title}</h2>
      <p>{p.message}</p>
      <div class="actions">
        <button type="button" onClick={p.onCancel}>
          Cancel
        </button>
        <button type="button" class={p.danger ? 'danger' : 'primary'} onClick={p.onConfirm}>
          {p.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
