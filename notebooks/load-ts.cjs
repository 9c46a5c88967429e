// Loads the library's TypeScript sources into a notebook through tsx.
//
// Why a CommonJS file: tslab compiles each cell to CommonJS and runs it in a vm script, where
// import() has no loader (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), and on Node 20 the CommonJS
// build of tsx/esm/api registers its hooks from a wrong path. A real CommonJS module can import()
// tsx's ESM build, which works on Node 20 and 24 alike. The tsx runner of `npm test` imports
// this file from an ES module, which works too.
const { pathToFileURL } = require('node:url');

/**
 * Imports a TypeScript module (path relative to the kernel's working directory, which Jupyter
 * sets to the notebook's folder) and returns its namespace.
 * @param {string} specifier
 * @returns {Promise<any>}
 */
async function loadTs(specifier) {
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(specifier, pathToFileURL(`${process.cwd()}/`).href);
}

module.exports = { loadTs };
