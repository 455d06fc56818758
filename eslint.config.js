import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // bench/.*.mjs: drivers the instruction benches bundle, there while they run.
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "taskjourney-out/**",
      "test-output/**",
      "collector/.cache/**",
      "coverage/**",
      "bench/.*.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: "readonly",
        process: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        performance: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        WebAssembly: "readonly",
        queueMicrotask: "readonly",
        AbortController: "readonly",
        fetch: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    // The report page's own script (inlined by src/report/html.ts): a browser script, not a module.
    files: ["src/report/page/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: { window: "readonly", document: "readonly", echarts: "readonly" },
    },
  },
);
