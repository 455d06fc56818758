/**
 * The report toolkit as the main entry exported it before `taskjourney/report` existed: kept for
 * one release so upgrading does not break imports, each name marked so editors strike it through.
 */
import * as report from "./report.js";

/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const breakdownFromSpans = report.breakdownFromSpans;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const breakdownsFromSpans = report.breakdownsFromSpans;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const SpanIndex = report.SpanIndex;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type SpanIndex = report.SpanIndex;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const decodeOtlpJson = report.decodeOtlpJson;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const readOtlpJsonFile = report.readOtlpJsonFile;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const renderHtmlReport = report.renderHtmlReport;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const reportDataFrom = report.reportDataFrom;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const formatPrefixTable = report.formatPrefixTable;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export const formatActivityTable = report.formatActivityTable;

/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type BreakdownFromSpansOptions = report.BreakdownFromSpansOptions;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type JourneyKind = report.JourneyKind;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type DecodedSpan = report.DecodedSpan;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type ReportData = report.ReportData;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type RenderOptions = report.RenderOptions;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type PrefixRow = report.PrefixRow;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type PrefixTableOptions = report.PrefixTableOptions;
/** @deprecated use `taskjourney/report`; leaves the main entry in the next release. */
export type ActivityTableOptions = report.ActivityTableOptions;
