// An optional vision-language model behind /v1/vision/describe: any OpenAI-compatible chat-completions
// endpoint that accepts images (vLLM, Ollama, llama.cpp server, a hosted API). The image goes as a data URI
// `image_url` content part beside the prompt; the reply may be plain JSON or a server-sent-event stream
// (servers differ in what they honour), and both are read. Failures become a 502 unless
// SIGHTFLOW_VLM_FALLBACK=true sends the request to the built-in describer instead.
import { errors, type ApiError } from '../base/errors.js';
import type { VlmConfig } from '../config/index.js';

export interface VlmRequest {
  /** The encoded image as uploaded (JPEG, PNG or WEBP). */
  bytes: Buffer;
  mime: string;
  prompt?: string;
  /** A language code the client asked for ("en", "fr", ...). */
  language?: string;
  detail?: 'low' | 'high';
  signal?: AbortSignal;
  /** Sent as the call's W3C `traceparent`. */
  traceparent?: string;
}

export interface VlmReply {
  text: string;
  model: string;
  /** From the provider's usage block; null when it sent none (then the caller counts). */
  usage: { input_tokens: number; output_tokens: number } | null;
}

const LANGUAGE_NAMES: Record<string, string> = {
  en: 'English',
  zh: 'Chinese (Simplified)',
  ja: 'Japanese',
  ko: 'Korean',
  fr: 'French',
  de: 'German',
  es: 'Spanish',
  it: 'Italian',
  pt: 'Portuguese',
  ru: 'Russian',
  ar: 'Arabic',
  hi: 'Hindi',
  nl: 'Dutch',
  pl: 'Polish',
  tr: 'Turkish',
};

/** The user text sent with the image: the client's prompt (or a plain "describe"), and the answer language. */
export function vlmPromptText(prompt: string | undefined, language: string | undefined): string {
  const ask =
    prompt?.trim() ||
    'Describe this image in a few sentences: the main objects, where they are, their colours, any readable text, and the setting.';
  if (!language) return ask;
  const primary = language.toLowerCase().split(/[-_]/)[0]!;
  return `${ask}\n\nAnswer in ${LANGUAGE_NAMES[primary] ?? language}.`;
}

export class VlmProvider {
  constructor(readonly config: VlmConfig) {}

  get model(): string {
    return this.config.model;
  }

  /** The chat-completions body we send (exported for the contract test to compare against). */
  body(req: VlmRequest): Record<string, unknown> {
    const image: Record<string, unknown> = { url: `data:${req.mime};base64,${req.bytes.toString('base64')}` };
    if (req.detail) image.detail = req.detail;
    return {
      model: this.config.model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: vlmPromptText(req.prompt, req.language) },
            { type: 'image_url', image_url: image },
          ],
        },
      ],
      max_tokens: this.config.maxTokens,
      stream: this.config.stream,
      ...(this.config.stream ? { stream_options: { include_usage: true } } : {}),
    };
  }

  /** One describe call; throws VlmError on every provider failure (network, timeout, status, bad reply). */
  async describe(req: VlmRequest): Promise<VlmReply> {
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (this.config.key) headers.authorization = `Bearer ${this.config.key}`;
    if (req.traceparent) headers.traceparent = req.traceparent;
    let res: Response;
    try {
      res = await fetch(this.config.url, { method: 'POST', headers, body: JSON.stringify(this.body(req)), signal });
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason;
      throw new VlmError(
        timeout.aborted ? `no reply within ${this.config.timeoutMs} ms` : `request failed: ${causeOf(e)}`,
      );
    }
    try {
      if (!res.ok) {
        const detail = (await res.text().catch(() => '')).replace(/\s+/g, ' ').slice(0, 200);
        throw new VlmError(`HTTP ${res.status}${detail ? `: ${detail}` : ''}`);
      }
      const type = res.headers.get('content-type') ?? '';
      const reply = type.includes('text/event-stream') ? await readStream(res) : readJson(await res.text());
      if (!reply.text.trim()) throw new VlmError('the reply has no text');
      return { ...reply, model: this.config.model };
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (e instanceof VlmError) throw e;
      throw new VlmError(
        timeout.aborted ? `no complete reply within ${this.config.timeoutMs} ms` : `bad reply: ${causeOf(e)}`,
      );
    }
  }
}

/** A provider failure; the route turns it into a 502 (or falls back). */
export class VlmError extends Error {
  toApiError(): ApiError {
    return errors.vlmProviderError(this.message);
  }
}

type UsageBlock = { prompt_tokens?: number; completion_tokens?: number } | null | undefined;

function usageOf(u: UsageBlock): VlmReply['usage'] {
  if (!u || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  return { input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens };
}

function readJson(text: string): Omit<VlmReply, 'model'> {
  const body = JSON.parse(text) as { choices?: { message?: { content?: unknown } }[]; usage?: UsageBlock };
  return { text: contentText(body.choices?.[0]?.message?.content), usage: usageOf(body.usage) };
}

/** Server-sent events: `data: {chunk}` lines until `data: [DONE]`; usage, if any, rides on a late chunk. */
async function readStream(res: Response): Promise<Omit<VlmReply, 'model'>> {
  let text = '';
  let usage: VlmReply['usage'] = null;
  let buffered = '';
  const decoder = new TextDecoder();
  const onEvent = (event: string): boolean => {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) return false;
    if (data === '[DONE]') return true;
    const chunk = JSON.parse(data) as {
      choices?: { delta?: { content?: unknown } }[];
      usage?: UsageBlock;
      error?: { message?: string };
    };
    if (chunk.error) throw new VlmError(`stream error: ${chunk.error.message ?? 'unknown'}`);
    text += contentText(chunk.choices?.[0]?.delta?.content);
    usage = usageOf(chunk.usage) ?? usage;
    return false;
  };
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(part, { stream: true });
    let end: number;
    while ((end = buffered.search(/\r?\n\r?\n/)) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end).replace(/^\r?\n\r?\n/, '');
      if (onEvent(event)) return { text, usage };
    }
  }
  onEvent(buffered + decoder.decode());
  return { text, usage };
}

/** `content` is a string, or (some servers) an array of {type: "text", text} parts. */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c))
    return c
      .map((p) =>
        p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
      )
      .join('');
  return '';
}

function causeOf(e: unknown): string {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  return err.cause?.code ?? err.cause?.message ?? err.message ?? String(e);
}
