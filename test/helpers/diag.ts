import { diag, DiagLogLevel, type DiagLogger } from "@opentelemetry/api";

/** Installs a diag logger at WARN that keeps every message it is given; undo with diag.disable(). */
export function captureDiag(): string[] {
  const messages: string[] = [];
  const record = (message: string) => messages.push(message);
  const logger: DiagLogger = { error: record, warn: record, info: record, debug: () => {}, verbose: () => {} };
  diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  return messages;
}
