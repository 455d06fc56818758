import {
  DEPENDENCIES_ACTIVITY,
  EXECUTE_ACTIVITIES,
  GATHER_ACTIVITIES,
  OTHER_ACTIVITY,
  QUEUED_ACTIVITY,
} from "../model/activities.js";

/** Activity ids fixed at construction, in this order, so the recorder needs no lookups for them. */
export const SEED_ACTIVITIES = [
  OTHER_ACTIVITY,
  DEPENDENCIES_ACTIVITY,
  QUEUED_ACTIVITY,
  "missing",
  "busy",
  "failed",
  "cancelled",
  ...EXECUTE_ACTIVITIES,
  ...GATHER_ACTIVITIES,
];
export const OTHER = 0;
export const DEPENDENCIES = 1;
export const QUEUED = 2;
export const MISSING_ACTIVITY = 3;
