// show() lives in model/ (it is pure), where the report toolkit may import it too (docs/architecture.md's layers).
export { show } from "../model/show.js";
