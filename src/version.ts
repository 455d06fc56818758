// Generated from package.json by scripts/write-version.mjs: edit the version there.
export const VERSION = "0.1.0";
