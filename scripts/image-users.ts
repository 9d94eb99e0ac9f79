// The users the images this project builds carry in /etc/passwd and /etc/group — distroless' root, nobody and
// nonroot, which the Dockerfile's base has and the chart's pods run as — declared once for meshgate's release image
// (release-image.ts) and the real-node tier's images (test/realnode/harness/images.ts), which add users of their own.

/** One account: its name, UID (its group's GID too), GECOS field and home. */
export interface ImageUser {
  name: string;
  uid: number;
  gecos: string;
  home: string;
}

/** The distroless :nonroot user the Dockerfile runs as. */
export const NONROOT_UID = 65532;

export const ROOT: ImageUser = { name: 'root', uid: 0, gecos: 'root', home: '/root' };
export const NOBODY: ImageUser = { name: 'nobody', uid: 65534, gecos: 'nobody', home: '/nonexistent' };
export const NONROOT: ImageUser = { name: 'nonroot', uid: NONROOT_UID, gecos: 'nonroot', home: '/home/nonroot' };

/** /etc/passwd for `users`, in that order, each in its own group, none with a login shell. */
export const passwd = (users: ImageUser[]): string =>
  users.map((u) => `${u.name}:x:${u.uid}:${u.uid}:${u.gecos}:${u.home}:/sbin/nologin\n`).join('');

/** /etc/group for `users`: one group each, of the user's name and UID, no members. */
export const group = (users: ImageUser[]): string => users.map((u) => `${u.name}:x:${u.uid}:\n`).join('');
