import type { Role } from "../../model/states.js";

/** What the span bridge is told by TaskJourneys (resolved options, see docs/options.md). */
export interface SpanBridgeOptions {
  role: Role;
  instance: string;
  /** Epoch seconds at which the recorder's clock read 0. */
  timeOrigin: number;
  keepSlowerThan: number;
  keepErrors: boolean;
  maxLinksPerSpan: number;
  maxChildrenPerSpan: number;
  maxAttributeLength: number;
  maxKeysPerTransfer: number;
}
