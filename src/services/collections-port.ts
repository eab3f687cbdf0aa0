// What one feature part may ask of vector collections without importing the vectors part: the video index
// step embeds frames and writes items through this interface, which the vectors part implements and hands
// over where the parts are wired (app.ts). Absent on a process that runs no vectors part.
import type { RgbImage } from '../media/rgb-image.js';

export interface CollectionItemWrite {
  /** The item id (unique within the collection; an existing id is replaced). */
  id: string;
  vector: Float32Array;
  metadata: Record<string, unknown>;
  /** A small JPEG shown for the item (its content_url); none: a text item with `text`. */
  jpeg?: Buffer;
  text?: string;
}

export interface CollectionWriter {
  readonly collectionId: string;
  readonly modelId: string;
  readonly dimensions: number;
  /** Whether the collection's model embeds text too (OCR text can then join an image's vector). */
  readonly embedsText: boolean;
  embedImage(image: RgbImage, signal?: AbortSignal): Promise<Float32Array>;
  embedText(text: string, signal?: AbortSignal): Promise<Float32Array>;
  /** Writes items (database first, then the index); resolves once they are searchable. */
  add(items: CollectionItemWrite[]): Promise<void>;
}

export interface CollectionsPort {
  /** The project's collection as a writer; an ApiError (404 naming `param`) when it does not exist. */
  writer(projectId: string, collectionId: string, param: string): Promise<CollectionWriter>;
}
