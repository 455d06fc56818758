/**
 * The wrappers of methods that move keys: a transition method and a method that learns a key's dependencies.
 */
import type { Key } from "../model/keys.js";
import type { AnyFunction } from "./function.js";
import { internalFailure } from "./guard.js";
import {
  FAILED,
  type Extract,
  extract,
  extractState,
  extractPrefix,
  extractTime,
  extractKeys,
  type Site,
  recordingWrapper,
} from "./extractors.js";

export function transitionWrapper(
  site: Site,
  spec: {
    key: Extract;
    from: string | Extract;
    to: string | Extract;
    dependencies?: Extract;
    prefix?: Extract;
    computation?: Extract;
    at?: Extract;
    error?: Extract;
  },
): AnyFunction {
  const journeys = site.journeys;
  const { key, from, to, dependencies, prefix, computation, at, error } = spec;
  const computationSite = `${site.name}: the computation extractor`;
  const errorSite = `${site.name}: the error extractor`;
  const prefixSite = `${site.name}: the prefix extractor`;
  const atSite = `${site.name}: the at extractor`;
  const keySite = `${site.name}: the key extractor`;
  const fromSite = `${site.name}: the from extractor`;
  const toSite = `${site.name}: the to extractor`;
  const dependenciesSite = `${site.name}: the dependencies extractor`;
  return recordingWrapper(site, (self, args) => {
    // One extractor at a time: a call the key extractor skips is never shown to the others.
    const k = extract(journeys, key, self, args, keySite);
    if (k === FAILED || k === undefined) return undefined;
    const f = extractState(journeys, from, self, args, fromSite);
    if (f === FAILED || f === undefined) return undefined;
    const t = extractState(journeys, to, self, args, toSite);
    if (t === FAILED || t === undefined) return undefined;
    const d =
      dependencies === undefined ? undefined : extractKeys(journeys, dependencies, self, args, dependenciesSite);
    if (d === FAILED) return undefined;
    const p = extractPrefix(journeys, prefix, self, args, prefixSite);
    if (p === FAILED) return undefined;
    // A computation is a non-empty name, checked as a prefix is.
    const c = extractPrefix(journeys, computation, self, args, computationSite, "a non-empty computation name");
    if (c === FAILED) return undefined;
    const a = extractTime(journeys, at, self, args, atSite);
    if (a === FAILED) return undefined;
    const e = error === undefined ? undefined : extract(journeys, error, self, args, errorSite);
    if (e === FAILED) return undefined;
    try {
      // No options object for the usual call, with no time, error or prefix to pass.
      if (p === undefined && c === undefined && a === undefined && e === undefined)
        journeys.transition(k as Key, f as string, t as string);
      else
        journeys.transition(k as Key, f as string, t as string, {
          at: a as number | undefined,
          error: e,
          prefix: p as string | undefined,
          computation: c as string | undefined,
        });
      if (d !== undefined) journeys.dependencies(k as Key, d);
    } catch (error) {
      return internalFailure(journeys, site.name, error);
    }
    return undefined;
  });
}

export function dependenciesWrapper(site: Site, spec: { key: Extract; dependencies: Extract }): AnyFunction {
  const journeys = site.journeys;
  const { key, dependencies } = spec;
  const keySite = `${site.name}: the key extractor`;
  const dependenciesSite = `${site.name}: the dependencies extractor`;
  return recordingWrapper(site, (self, args) => {
    const k = extract(journeys, key, self, args, keySite);
    if (k === FAILED || k === undefined) return undefined;
    const d = extractKeys(journeys, dependencies, self, args, dependenciesSite);
    if (d === FAILED || d === undefined) return undefined;
    try {
      journeys.dependencies(k as Key, d);
    } catch (error) {
      return internalFailure(journeys, site.name, error);
    }
    return undefined;
  });
}
