// Known bugs the fuzz suite runs into, one tag each with a minimal
// reproduction. A property marks exactly the failures a tag explains (see
// harness.ts `Known`); they are counted, not failed, until the fix lands:
// then delete the tag here, and the compiler shows every place that used it.
// `npm run fuzz -- --strict` (GPUEXT_FUZZ_STRICT=1) fails on them too.
//
// Issue 14 items 3 (overlapping outputs), 4 (integer ops with a wider 0-d
// operand) and 5 (float16 from a JS number) were fixed before this suite
// landed; their cases are kept in regressions.ts.
export const KNOWN = {
  // Every bug the suite found so far is fixed; their cases live on in regressions.ts.
} as const satisfies Record<string, string>;
