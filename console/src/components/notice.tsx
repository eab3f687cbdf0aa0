// Messages for errors, empty states and parts of the API that are not installed on this server.
import type { ComponentChildren } from 'preact';
import { HttpError } from '../api/http';

export function Notice(props: {
  kind: 'error' | 'info' | 'success' | 'warning';
  title?: string;
  children?: ComponentChildren;
}) {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.title && <strong class="notice-title">{props.title}</strong>}
      {props.children}
    </div>
  );
}

export function errorMessage(e: unknown): string {
  if (e instanceof HttpError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

export function ErrorNotice(props: { error: unknown; what?: string }) {
  return (
    <Notice kind="error" title={props.what ? `Could not load ${props.what}` : 'Something went wrong'}>
      {errorMessage(props.error)}
    </Notice>
  );
}

/** Shown instead of a page whose API answers 404 for the route itself (not installed or not built yet). */
export function Unavailable(props: { feature: string; routes: string }) {
  return (
    <Notice kind="info" title={`${props.feature} are not available on this server`}>
      <p>
        The API for this page ({props.routes}) answered 404: this sightflow does not serve it yet. Everything else in
        the console works.
      </p>
    </Notice>
  );
}

export function isRouteMissing(e: unknown): boolean {
  return e instanceof HttpError && e.routeMissing;
}

export function Loading(props: { what: string }) {
  return (
    <p class="loading" aria-live="polite">
      Loading {props.what}…
    </p>
  );
}
