/**
 * Loads an exporter's package on demand (only configured exporters are loaded). They are all
 * dependencies of taskjourney, so a missing one means an incomplete installation (an
 * `--omit`, a copied node_modules): say which package and the one line that repairs it. One that
 * cannot link against the project's @opentelemetry/api says which api it needs.
 */
import { IncompatibleDependencyError, MissingDependencyError } from "../shared/errors.js";
export async function load<T>(importer: () => Promise<T>, name: string, why: string): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      String((error as Error).message).includes(name)
    ) {
      throw new MissingDependencyError(
        `startTelemetry: ${why} needs the package ${name}, a dependency of taskjourney missing from this installation; run: npm install taskjourney @opentelemetry/api`,
        { cause: error },
      );
    }
    // An SDK package of the 3.x line linked against an @opentelemetry/api older than it needs
    // (npm installs 3.x on Node ≥ 22.15 even where the project pins api 1.9, with only warnings).
    if (error instanceof SyntaxError && /'@opentelemetry\/api' does not provide an export named/.test(error.message)) {
      throw new IncompatibleDependencyError(
        `startTelemetry: ${name} (for ${why}) needs a newer @opentelemetry/api than this project has (${error.message}). ` +
          "The OpenTelemetry JS 3.x packages npm installed need @opentelemetry/api 1.10: run npm install @opentelemetry/api@^1.10, " +
          "or keep api 1.9 with the 2.x packages throughout (docs/runtimes.md)",
        { cause: error },
      );
    }
    throw error;
  }
}
