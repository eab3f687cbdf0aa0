// The signed-in admin session, shared by every page: the admin API client and a way to sign out (also used
// when the server stops accepting the token).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AdminApi } from './api/admin-api';

export interface AdminSession {
  api: AdminApi;
  signOut(reason?: string): void;
}

export const SessionContext = createContext<AdminSession | null>(null);

export function useSession(): AdminSession {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in console');
  return s;
}
