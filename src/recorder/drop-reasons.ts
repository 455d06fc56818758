/**
 * Every reason of `taskjourney.dropped{reason}` (a documented metric attribute), with what it
 * counts: inputs dropped or repaired, and failures of telemetry's own making. Named here once; a
 * reason given anywhere else is a `DropReason`, checked against this list by the type checker.
 */
export const DROP_REASONS = {
  "invalid-time":
    "a time that is not a number, or is NaN or infinite (one before the clock's 0 is a backdated journey, fine); the clock's reading is used instead",
  "clock-skew":
    "a time further than limits.maxClockSkew seconds from the clock (e.g. milliseconds given as seconds); the clock's reading is used instead",
  "invalid-clock":
    "the clock returned something other than seconds from 0 to 1e12 (about 31,700 years), or threw; its last good reading is used instead",
  "invalid-name":
    "an activity name, unit, peer or queued() reason that is not a string (or an empty activity name); an activity is recorded as other, the rest is dropped",
  "key-too-long": "a key longer than limits.maxKeyLength; the call is dropped",
  "invalid-key":
    "a value that is not a key, or gather() / serve() / dependencies() given something other than an array of keys (or one that cannot be read: a revoked Proxy)",
  "unknown-state": "a state name taskjourney does not know; the transition is dropped",
  "wrong-role-state":
    "a state of the other role (a scheduler state on a worker, or the reverse); the transition is dropped",
  "unknown-key":
    "a transition of a key with no journey here, from a live state (not the initial or a terminal one) and with no ended journey retained; its journey starts at the new state.",
  "hand-off-without-journey":
    "handOff() of a key with no live journey here (none begun, or already ended); nothing is written or ended",
  "stale-transition":
    "a transition from a live state of a key whose journey already ended (among the retained ones), into a live state or an end other than the one it had: a late event of it; dropped, no journey begins",
  "state-mismatch": "a transition from a state the key is not in; repaired from the state it is in",
  "duplicate-transition":
    "a transition into the state the key is already in, from another (the same move told twice); dropped",
  "impossible-transition": "a transition the role's state machine does not have; recorded as given",
  "time-backwards": "a transition earlier than the start of the key's current state; recorded at that start",
  "dependencies-overflow":
    "dependencies() of over 100000 keys whose journeys have not begun; the further ones are dropped",
  "invalid-value":
    "a digest() value or gather() bytes that is not a number, negative, NaN, infinite, beyond Number.MAX_SAFE_INTEGER (seconds: beyond limits.maxClockSkew); dropped",
  "invalid-work": "meter() or run() given something other than a function to run; nothing is run or recorded",
  "ledger-ended": "meter(), digest() or end() on a ledger already ended; the work runs unmetered",
  "no-ledger-state":
    "execute() or gather() with a state machine that has no executing or transfer state; the ledger records nothing",
  "invalid-outcome":
    'an outcome end() does not know, recorded as "error" (execute) or "failed" (gather); or an error given with a move into a success state, not recorded',
  "before-hand-off":
    "a consumer's journey, kept or sampled, that began over 1 ms before the producer's journey it continues (as the hand-off carrier says): two clocks that disagree, or a queue's millisecond times on one side and the clock's readings on the other; its spans start at the producer's start, explain() keeps the times given. Within 1 ms (a millisecond timestamp's truncation) it is no mistake: clamped silently, not counted",
  "started-before-parent":
    "a journey, kept or sampled, that began over 1 ms before the journey it continues (receiver.continueFrom(), a sampled carrier of sender.inject() says when that one began): two clocks that disagree, or the other side's start given after this one began; its spans start at the other's start, explain() keeps the times given. Within 1 ms (a millisecond timestamp's truncation) it is no mistake: clamped silently, not counted",
  "invalid-parent-start":
    "a sampled carrier given to receiver.continueFrom() whose taskjourney-start member (when the other side's journey began) is not one (garbled, or beyond limits.maxClockSkew from the journey's start); ignored, the journey's spans start at the times given",
  "ended-before-result":
    "a journey, kept or sampled, that ended over 1 ms before the end of a journey whose result came back to it (receiver.resultFrom(), its carrier says when that one ended): two clocks that disagree, or this end given before the other side's ended; its task span ends at the other's end, explain() keeps the times given",
  "invalid-result-end":
    "a sampled carrier given to receiver.resultFrom() whose taskjourney-end member (when the other side's journey ended) is not one (garbled, or beyond limits.maxClockSkew from the clock); ignored, the journey is kept as the carrier says",
  "late-parent":
    "parent() for a key whose journey here had already begun: too late to make it the journey's parent; a sampled context is linked from its task span instead, an unsampled one ignored",
  "invalid-options":
    "a call's trailing options object ({ at, error, prefix }, { bytes, at }, …) whose properties threw when read (a getter, a Proxy); the call is recorded as if given none",
  "invalid-carrier":
    "a propagation call (sender.inject(), sender.injectTransfer(), sender.handOff(), receiver.extract(), continueFrom(), resultFrom(), dataFrom(), replyFrom(); or their deprecated names) or serve() given a carrier, context or ledger that could not be read or written, or continueFrom() / inject() given something that is no carrier (not an object, or a traceparent that is not W3C's); the call did nothing",
  "ledger-open-at-end":
    "a key reached a terminal state while an execute() ledger on it, or a gather() ledger whose every key ended, was still open; the ledger is closed then, with the outcome that state implies, and its own end() later does nothing",
  "live-journeys-limit":
    "a journey begun past limits.maxLiveJourneys journeys live at once; the oldest live journey is abandoned to make room: its current visit is not counted, its spans end marked taskjourney.abandoned",
  "live-serves-limit":
    "a serve() with a sampled carrier begun with 10000 such serves' ledgers open; the oldest one's get_data span is ended then, marked taskjourney.abandoned",
  "listener-error": "a listener of finished journeys (the span bridge) threw; its spans may be missing",
  "wrap-extractor-error":
    "an extractor given to instrument() threw or returned something unusable, and the call proceeds unrecorded; or an outcome mapper did, and the call is recorded with the default outcome",
  "wrap-internal-error": "a taskjourney call made by a wrapper failed; the wrapped call proceeds untouched",
  "prefix-limit":
    'a distinct task prefix past limits.maxPrefixes, folded into "other" (counted once per prefix; one folded again after at least 10,000 others is counted again); describe() or keyPrefix give keys their family name',
  "name-too-long": "a task prefix or activity name longer than 256 characters (they are metric attributes); cut to 256",
  "prefix-looks-like-id":
    "a distinct task prefix that looks like an id (digits, hex, a UUID), counted once per prefix: the key became its own prefix",
  "key-prefix-error":
    "the keyPrefix option threw or returned something other than a non-empty string; the key's key_split prefix is used",
  "invalid-description":
    "describe() given something other than { prefix?, group? } of non-empty strings; the description is dropped",
  "computation-limit":
    'a journey begun under a computation past limits.maxComputations kept, every one of them still live (none finished to retire); its totals go to the computation "other"',
  "computation-unexported":
    "a computation finished and retired (limits.maxComputations) that a metric producer never exported: more than limits.maxComputations retired between two of its collections, or its name begun again before it was collected; counted by each producer that missed it",
  "invalid-computation":
    "transition() given a computation that is not a non-empty string; the journey is recorded without one",
  "describe-overflow":
    "describe() of a key past the 100000 keys described and not yet forgotten; the description is dropped",
} as const;

export type DropReason = keyof typeof DROP_REASONS;
