// Failures of the file system said about the file the user named. Node's errors name the system
// call and the path it was given, which may be a temporary file beside the user's (a state's or a
// lock's, DuckDB's new database), and its recursive mkdir says ENOENT whatever the true cause.
import { LenderError } from './errors.ts';

/** What could not be done with the user's file, and the system's reason. `code` is the cause's. */
export class FileError extends LenderError {
  override name = 'FileError';
  readonly code: string | undefined;
  readonly path: string;
  /** `what`: the failed step, said of `path` ("create the folder", "write the state file"). */
  constructor(what: string, path: string, cause: unknown) {
    super(`cannot ${what} ${path}: ${reasonOf(cause)}`, { cause });
    this.code = codeOf(cause);
    this.path = path;
  }
}

/** The error's system code (ENOENT, EROFS, …), if it has one. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** "read-only file system (EROFS)": the system's words from Node's message, and the code. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = codeOf(error);
  // Node's form: "EROFS: read-only file system, open '/path'".
  const words = code === undefined ? undefined : new RegExp(`^${code}: ([^,]+)`).exec(message)?.[1];
  if (words !== undefined) return `${words} (${code})`;
  return code === undefined ? message : `${message} (${code})`;
}

/** Runs `step`; a failure becomes a FileError naming `path` (one already is stays as it is). */
export async function aboutFile<T>(what: string, path: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof FileError ? error : new FileError(what, path, error);
  }
}
