// Where the session's helpers run: in a Jupyter kernel of tslab (the TypeScript kernel the
// notebooks use), tables and charts are shown through tslab's display API as HTML and SVG; anywhere
// else (the REPL, a script, a terminal) they are text.
//
// Cells run in the kernel's process, and tslab hands them `require` through the global
// `__tslab__`, whose `require('tslab')` is the kernel's own module: its `display` writes to the cell
// running now. The library is loaded through tsx, outside tslab's hooked `require`, so it asks
// for tslab the same way a cell does. Outside a tslab kernel there is no `__tslab__`.

/** The part of tslab's `display` the session uses. */
export interface NotebookDisplay {
  html(markup: string): void;
  svg(markup: string): void;
}

interface TslabGlobal {
  __tslab__?: { require?: (id: string) => unknown };
}

/** tslab's display when this code runs in a tslab kernel, else undefined. */
export function notebookDisplay(): NotebookDisplay | undefined {
  const kernel = (globalThis as TslabGlobal).__tslab__;
  if (typeof kernel?.require !== 'function') return undefined;
  try {
    const display = (kernel.require('tslab') as { display?: Partial<NotebookDisplay> }).display;
    return typeof display?.html === 'function' && typeof display.svg === 'function' ? (display as NotebookDisplay) : undefined;
  } catch {
    return undefined;
  }
}
