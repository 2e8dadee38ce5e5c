import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite is ONE Postgres session, shared by every client of the embedded socket. A session
 * group is a set of connections that may share that session's settings: all of Latchkey's
 * own connections form one group (they never change a setting), and every outside client
 * (psql, pg_dump, a backup) is a group of its own.
 */
export interface SessionGroup {
  readonly name: string;
  /** Latchkey's group: it runs on the baseline settings and is never snapshotted. */
  readonly isBaseline: boolean;
  /** Settings this group changed, saved while another group has the session. */
  saved?: SavedSettings;
  isClosed?: boolean;
}

interface SavedSettings {
  settings: Record<string, string>;
  sessionUser: string;
  role: string;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Moves the session between groups: the settings of the group leaving are saved, the session
 * reset to the baseline, and the settings of the group arriving restored. Only called between
 * transactions (the socket server never switches inside one), so SET LOCAL needs no care.
 */
export async function createSessionSwitcher(db: PGlite, baseline: SessionGroup) {
  // PGlite's SET SESSION AUTHORIZATION DEFAULT does not return to the original user: name it.
  const baselineUser = (await db.query<{ u: string }>('select session_user as u')).rows[0].u;
  let current: SessionGroup = baseline;

  async function snapshot(): Promise<SavedSettings> {
    const { rows } = await db.query<{ settings: Record<string, string> | null; session_user: string; role: string }>(
      `select (select json_object_agg(name, setting) from pg_settings where source = 'session') as settings,
              session_user, current_setting('role') as role`,
    );
    return { settings: rows[0].settings ?? {}, sessionUser: rows[0].session_user, role: rows[0].role };
  }

  async function reset(): Promise<void> {
    await db.exec(`RESET ROLE; SET SESSION AUTHORIZATION ${quoteIdent(baselineUser)}; RESET ALL`);
  }

  async function restore(saved: SavedSettings): Promise<void> {
    // Settings first: some may be superuser-only, and the role below may not be one.
    if (Object.keys(saved.settings).length) {
      await db.query('select set_config(key, value, false) from json_each_text($1)', [JSON.stringify(saved.settings)]);
    }
    if (saved.sessionUser !== baselineUser) await db.exec(`SET SESSION AUTHORIZATION ${quoteIdent(saved.sessionUser)}`);
    if (saved.role !== 'none') await db.exec(`SET ROLE ${quoteIdent(saved.role)}`);
  }

  return {
    get current() {
      return current;
    },
    /** Gives the session to `group`; a no-op when it already has it. */
    async enter(group: SessionGroup): Promise<void> {
      if (group === current) return;
      if (!current.isBaseline) {
        if (!current.isClosed) current.saved = await snapshot();
        await reset();
      }
      current = baseline;
      if (group.saved) {
        try {
          await restore(group.saved);
        } catch {
          await reset(); // e.g. its role was dropped meanwhile: it continues on the baseline
          group.saved = undefined;
        }
      }
      current = group;
    },
  };
}

export type SessionSwitcher = Awaited<ReturnType<typeof createSessionSwitcher>>;
