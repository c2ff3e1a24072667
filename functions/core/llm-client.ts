/** Where LLM calls go and with which key. `apiKey` undefined means "not configured". */
export interface LlmConfig {
  apiKey?: string;
  baseURL?: string;
  /** Model used when a node names none. */
  defaultModel?: string;
}

/**
 * Supplies the LLM configuration at call time. Locally it reads the environment; on AWS the handler
 * may plug in a lookup of the Secrets Manager secret named by FLOWMEND_ANTHROPIC_SECRET_ID.
 */
export type LlmConfigProvider = () => LlmConfig | Promise<LlmConfig>;

export type LlmImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** An image sent before the prompt text: by URL, or its bytes in base64. */
export type LlmImage =
  | { type: 'image'; source: { type: 'url'; url: string } }
  | { type: 'image'; source: { type: 'base64'; media_type: LlmImageMediaType; data: string } };

/** One user message to a model, and where to send it. */
export interface LlmMessageRequest {
  apiKey: string;
  baseURL?: string;
  model: string;
  maxTokens: number;
  prompt: string;
  images: readonly LlmImage[];
  system?: string;
  /** Text blocks before the system prompt, marked for the provider's prompt cache (the last block ends the cached prefix). */
  cachedContext?: readonly string[];
  cacheTtl?: '5m' | '1h';
  temperature?: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The model's answer; a request the API refused for a reason the workflow can fix (a 4xx such as an unknown model); or a call the signal cancelled. */
export type LlmMessageResult =
  | {
      kind: 'message';
      text: string;
      model: string;
      /** Tokens written to and read from the prompt cache are counted apart from `input_tokens`, as the API counts them. */
      usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
      stopReason: string | null;
    }
  | { kind: 'rejected'; status: number; type?: string; message: string }
  | { kind: 'aborted' };

/**
 * Sends one message to a model (the llm node's port). Rejects with `TransientError` when the API is
 * throttled, overloaded, failing (5xx) or unreachable, and with `ConfigurationError` when it rejects
 * the key or the account; anything the workflow can fix comes back as `rejected`.
 */
export interface LlmClient {
  send(request: LlmMessageRequest): Promise<LlmMessageResult>;
}
