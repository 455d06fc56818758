import { describe, expect, it } from "vitest";
import { MAX_OPEN_SERVE_SPANS } from "../../../src/otel/spans/serves.js";
import { harness, render } from "./helpers.js";

const SAMPLED = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };

describe("get_data spans of serves", () => {
  it("a traced serve is a SERVER child of the requester's gather_dep, ended with its ledger", () => {
    const h = harness();
    const ledger = h.journeys.serve("tcp://peer:1", ["x-1"], SAMPLED);
    h.clock.set(101);
    ledger.digest("network", 2048, "bytes");
    ledger.end("ok");
    expect(render(h.exporter.getFinishedSpans())).toEqual(["get_data SERVER 100-101"]);
  });

  it(`holds at most ${MAX_OPEN_SERVE_SPANS} open when ledgers are never ended: the oldest is abandoned, counted`, () => {
    const h = harness();
    const ledgers = [];
    for (let index = 0; index <= MAX_OPEN_SERVE_SPANS; index++) {
      h.clock.set(100 + index / 1000);
      ledgers.push(h.journeys.serve(`tcp://peer:${index}`, [`x-${index}`], SAMPLED));
    }
    const spans = h.exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    expect(spans[0].attributes).toMatchObject({
      "transfer.peer": "tcp://peer:0",
      "taskjourney.unfinished": true,
      "taskjourney.abandoned": true,
    });
    // Ended where the serve that made room began.
    expect(render(spans)).toEqual([`get_data SERVER 100-${100 + MAX_OPEN_SERVE_SPANS / 1000}`]);
    expect(h.journeys.dropped()).toEqual({ "live-serves-limit": 1 });
    // Its ledger's end() later adds no second span; the others still end theirs.
    ledgers[0].end("ok");
    ledgers[1].end("ok");
    expect(h.exporter.getFinishedSpans()).toHaveLength(2);
  });
});
