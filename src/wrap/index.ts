export { instrument } from "./instrument.js";
export type {
  InstrumentSpec,
  TransitionSpec,
  DependenciesSpec,
  ExecuteSpec,
  GatherSpec,
  ActivitySpec,
  Extractor,
  MethodName,
  MethodArgs,
  MethodResult,
  Unwrap,
} from "./instrument.js";
export { wrap } from "./wrap.js";
