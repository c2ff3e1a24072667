/** Node types that read and write files under the run's workspace (the engine passes it as `__workspace`). */
export const FILE_NODE_TYPES: ReadonlySet<string> = new Set(['read-file', 'write-file', 'copy-file', 'move-file', 'delete-file']);

/** Why a host without file nodes (AWS) refuses them. */
export const FILE_NODES_LOCAL_ONLY =
  'file nodes run on the local host only (flowmend run, with --workspace DIR): a Lambda has no workspace to confine them to. On AWS, move data with http or mcp nodes (e.g. to S3 through a presigned URL)';
