// An admin call answered 401: the token was changed on the server. Back to sign-in instead of broken pages.
import { useEffect } from 'preact/hooks';
import { HttpError } from '../api/http';
import { useSession } from '../session-context';

export function useAdminErrors(error: unknown): void {
  const { signOut } = useSession();
  useEffect(() => {
    if (error instanceof HttpError && error.status === 401)
      signOut('The admin token is no longer accepted. Sign in again.');
  }, [error, signOut]);
}
