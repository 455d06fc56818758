// The names live in src/shared/semconv.ts, at the bottom of the layers, where the report toolkit
// may import them too (docs/architecture.md); this re-export keeps otel/'s and the facade's imports.
export * from "../shared/semconv.js";
