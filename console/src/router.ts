// A tiny history router: the console lives under /console and the server answers every page path with
// index.html, so deep links and reloads land on the right page.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === '' ? '/' : p;
}

export function href(path: string): string {
  return BASE + (path === '/' ? '/' : path);
}

export function navigate(path: string, replace = false): void {
  const url = href(path);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event('sightflow:navigate'));
  window.scrollTo(0, 0);
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('popstate', update);
    window.addEventListener('sightflow:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('sightflow:navigate', update);
    };
  }, []);
  return path;
}

/** Same-origin links go through the router (plain clicks only; modified clicks open tabs as usual). */
export function onLinkClick(e: MouseEvent, path: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(path);
}
