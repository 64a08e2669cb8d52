// `@aexhq/brain-core/calls`: the journal rules of reports on open calls, shared by server and worker.
export { endUnknownWhenBack, endWithInvalidOutput, journalBudgetRefusal } from "./report-rules.js";
