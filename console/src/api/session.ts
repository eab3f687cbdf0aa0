// Credentials live in sessionStorage only: they vanish with the tab, and never reach localStorage or cookies.
const ADMIN_TOKEN = 'sightflow.adminToken';
const projectKeyName = (projectId: string) => `sightflow.projectKey.${projectId}`;

function read(name: string): string | null {
  try {
    return sessionStorage.getItem(name);
  } catch {
    return null;
  }
}

function write(name: string, value: string | null): void {
  try {
    if (value === null) sessionStorage.removeItem(name);
    else sessionStorage.setItem(name, value);
  } catch {
    /* storage disabled: the console still works until reload */
  }
}

export const session = {
  adminToken: () => read(ADMIN_TOKEN),
  setAdminToken: (token: string | null) => write(ADMIN_TOKEN, token),
  projectKey: (projectId: string) => read(projectKeyName(projectId)),
  setProjectKey: (projectId: string, key: string | null) => write(projectKeyName(projectId), key),
  signOut(): void {
    try {
      sessionStorage.clear();
    } catch {
      /* nothing stored */
    }
  },
};
