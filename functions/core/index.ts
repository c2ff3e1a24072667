// The one entry to core for the other layers (nodes, adapters, hosts, infra, bench): an explicit list,
// so that what core offers is visible in one place. test/architecture/boundaries.test.ts checks that
// nothing outside core (tests of core internals aside) imports a core module directly.

export { commitAdvance, commitOneByOne } from './advance-commit.ts';
export { BATCH_OUTPUT_KEYS, type BatchConfig, BatchConfigSchema } from './batch/batch-config.ts';
export { isItemResult, recordBatchItem } from './batch/record-item.ts';
export {
  BLOB_PREFIX,
  type BlobRef,
  type BlobStore,
  type BlobUpload,
  blobMarker,
  blobRefIn,
  blobRefOf,
  MAX_INLINE_OUTPUT_BYTES,
  type ParamsRef,
  runResultBlobKey,
  stepBlobKey,
  utf8Length,
} from './blob-store.ts';
export { type CancelOutcome, cancelOutcomeOf } from './cancel-outcome.ts';
export {
  awaitCancelledStep,
  type CancelFlow,
  type CancelledStep,
  type CancelResult,
  cancelRun,
  NOT_STARTED_BY_CANCEL,
  STOPPED_BY_CANCEL,
} from './cancel-run.ts';
export { type CheckOutcome, checkBeforeTry, isCheckInput } from './check-run.ts';
export { sampleOf } from './classify.ts';
export { closestMatch } from './closest-match.ts';
export {
  type AslDefinition,
  batchStateName,
  buildDefinition,
  itemRunnerStateName,
  recordItemStateName,
  runnerStateName,
  STATE,
  TASK_TIMEOUT_MARGIN_S,
  type TaskTimeouts,
} from './definition.ts';
export { advanceRun, type EngineDeps } from './engine.ts';
export { EngineCache } from './engine-cache.ts';
export { ENGINE_VARIABLE, isEngineVariable } from './engine-env.ts';
export {
  BlobPathError,
  ConfigurationError,
  CorruptItemError,
  FlowmendError,
  InvalidInputError,
  ItemTooLargeError,
  RunBusyError,
  RunNotFoundError,
  StaleRunError,
  StoreError,
  StoreUnavailableError,
  TransientError,
  WaitNotOpenError,
} from './errors.ts';
export { chooseMode, DEFAULT_EXECUTION_LIMITS, type ExecutionLimits, REPAIR_LLM_TIMEOUT_S, REPAIR_MAX_S } from './execution-limits.ts';
export { CONTINUED_EXECUTION_NAME, continuedExecutionName, ownerExecutionName, runIdOfExecution, runIdOfOwnerName } from './execution-names.ts';
export { ConcurrencySchema, DebounceSchema, flowKey, RateLimitSchema, SingletonSchema } from './flow/flow-config.ts';
export { DEFAULT_GRANT_MS, DEFAULT_LEASE_MARGIN_MS, type FlowDeps } from './flow/flow-step.ts';
export { changeFlow, type FlowDocument, type FlowStore, MemoryFlowStore } from './flow/flow-store.ts';
export { classifyHttpStatus } from './http-status.ts';
export { cryptoIds, type Ids } from './ids.ts';
export { prepareInputs } from './inputs.ts';
export { DEFAULT_REPAIR_APPROVAL, type RepairApproval, RepairApprovalSchema, type Workflow, type WorkflowInput, WorkflowSchema } from './ir.ts';
export { isRecord, openJsonText } from './json-text.ts';
export { DEFAULT_LIMITS, LIMIT_VARIABLES, LimitConfigError, type Limits, LimitsSchema, limitsFrom } from './limits.ts';
export type { LlmClient, LlmConfig, LlmConfigProvider, LlmImage, LlmImageMediaType, LlmMessageRequest, LlmMessageResult } from './llm-client.ts';
export { isHttpServer, MCP_TYPE, McpConfigFileSchema, type McpServer, McpServerSchema, type McpServers } from './mcp-servers.ts';
export type { McpToolCall, McpToolOutcome, McpTools } from './mcp-tools.ts';
export { DEFAULT_MEMO_TTL_S, type MemoEntry, MemoEntrySchema, MemoryMemoStore, type MemoStore } from './memo-store.ts';
export { MemoryRunStore } from './memory-run-store.ts';
export { type ChildLoader, type ChildSource, inlineChildWorkflows } from './nested/inline-children.ts';
export { type ListedRun, listingWindow, listRunTree } from './nested/run-listing.ts';
export { workflowOutputKeys } from './nested/validate-children.ts';
export { WORKFLOW_TYPE, WorkflowParamsSchema } from './nested/workflow-params.ts';
export {
  type LlmUsage,
  makeCatalog,
  type NodeCatalog,
  type NodeError,
  type NodeRunner,
  type NodeTypeSpec,
  type RunContext,
  type RunnerResult,
} from './node-type.ts';
export { checkRunPatch, type PatchCheck } from './patch-run.ts';
export type { PflowFormOptions } from './pflow-forms.ts';
export { prepareRun, type RunRequest, type RunSpec } from './prepare-run.ts';
export { ProgressCursorSchema, type ProgressEvent, type ProgressPage, readProgress } from './progress-feed.ts';
export { RedactingRunStore, SECRET_INPUT_MARK } from './redacting-run-store.ts';
export { REDACTED, Redactor } from './redactor.ts';
export {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type Schedule,
  ScheduleSchema,
  WorkflowNameSchema,
  type WorkflowSummary,
  type WorkflowVersion,
  WorkflowVersionSchema,
} from './registry-model.ts';
export type { IdempotencyClaim, RegistryStore } from './registry-store.ts';
export { applyManualPatch, completedNodes, planRepair, type RepairFailure } from './repair/index.ts';
export { type RepairRunDeps, repairRun } from './repair/repair-run.ts';
export type { RepairLlm, RepairLlmReply, RepairLlmRequest } from './repair/types.ts';
export type { LaunchRequest, RunLauncher } from './run-launcher.ts';
export { type ClaimOptions, claimRun, createRun, DEFAULT_MAX_REPAIRS, type InterruptOutcome, markInterrupted, type NewRun, newRunId } from './run-lifecycle.ts';
export {
  type IrVersionItem,
  IrVersionItemSchema,
  type NodeRecord,
  NodeRecordSchema,
  type Owner,
  type RepairAttempt,
  type RunError,
  type RunEvent,
  RunEventSchema,
  RunIdSchema,
  type RunItem,
  RunItemSchema,
  type RunStatus,
  RunStatusSchema,
} from './run-model.ts';
export { type ObservedWrite, observationsOf, type RunObservation, type RunObserver } from './run-observations.ts';
export { clearPath, forgetPathChanges, pathReadAt, setLatest, setVisits, sharePathChanges, takePathChanges } from './run-path.ts';
export { loadRunReport, type RunReport, recordsOfRun } from './run-report.ts';
export { type AdvanceCommit, type RunStore, type RunWriteCondition, waitingAmong } from './run-store.ts';
export { changeOf, loadRunView } from './run-view.ts';
export { loadRunWorkflow, type RunWorkflow } from './run-workflow.ts';
export { SCHEDULE_EXPRESSION, SCHEDULER_TIME_PLACEHOLDER, ScheduledStartEventSchema, scheduledIdempotencyKey } from './scheduled-start-event.ts';
export {
  findSecretReferences,
  parseSecretSource,
  replaceSecretReferences,
  resolveSecretReferences,
  SECRET_SOURCE_PATTERN,
  type SecretResolver,
  type SecretService,
  type SecretSource,
  secretReference,
} from './secret-source.ts';
export { visitSpanId } from './span-id.ts';
export {
  type AdvanceOutcome,
  BatchItemSpecSchema,
  type ItemRecorded,
  RepairOutcomeSchema,
  type RepairReport,
  type RunOutcome,
  RunOutcomeSchema,
  TaskErrorSchema,
} from './state-io.ts';
export { copyStoredValue, sameStoredValue } from './stored-value.ts';
export { findTemplates } from './templates.ts';
export {
  formatTraceparent,
  parseTraceparent,
  type RunTrace,
  startRunTrace,
  type TraceParent,
  type TraceStart,
  visitTraceparent,
} from './trace-context.ts';
export { formatIssues, hasErrors, parseWorkflow, rememberValidation, validateWorkflow } from './validate.ts';
export { formatIssuePath, type ValidationIssue } from './validation-issue.ts';
export { answerWait, MAX_COMMENT_CHARS, MAX_EVENT_PAYLOAD_BYTES, type WaitReply } from './waits/answer-wait.ts';
export { CALLBACK_TOKEN_PATTERN, type CallbackConfig, type CallbackSource, callbackUrl } from './waits/callback-token.ts';
export { EARLY_WAKE_TOLERANCE_MS } from './waits/claim-wake.ts';
export type { WakeRequest, Wakeups } from './waits/pause.ts';
export { describeWait, flowOfWait, type Wait, type WaitAnswer, type WaitFlow, type WaitKind, WaitSchema, wakeAt, withFlow } from './waits/wait-model.ts';
export {
  CALLBACK_KEYS,
  WAIT_FOR_EVENT_OUTPUT_KEYS,
  WAIT_FOR_EVENT_TYPE,
  WAIT_OUTPUT_KEYS,
  WAIT_TYPE,
  WaitForEventParamsSchema,
  WaitParamsSchema,
} from './waits/wait-nodes.ts';
