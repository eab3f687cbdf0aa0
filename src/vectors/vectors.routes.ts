// /v1/vectors/* (docs/vectors.md): thin adapters. Each route's schema validates the request, the
// use case runs in VectorsService (vectors.service.ts), the result is the JSON answer. The creating POSTs
// (collections, index) honour Idempotency-Key (http/idempotency.ts).
import { callerOf, defineRoute, type RequestContext, type RouteDef } from '../http/route.js';
import {
  CollectionOut,
  CreateCollectionBody,
  DeleteItemsBody,
  IndexBody,
  ItemOut,
  ItemsQuery,
  ModelOut,
  PatchItemBody,
  SearchBody,
  SearchResultOut,
  UsageOut,
} from './schemas.js';
import type { VectorsService } from './vectors.service.js';
import { idempotent } from '../http/idempotency.js';
import type { Db } from '../store/db.js';
import { z } from 'zod';
import { VideoGroupOut } from './moment-search.js';

/** Index requests carry up to 100 media items: a larger body limit than other JSON routes. */
const INDEX_BODY_LIMIT = 128 * 1024 * 1024;

export function vectorsRoutes(vectors: VectorsService, db: Db): RouteDef[] {
  const tags = ['vectors'];
  const errorsDoc = {
    400: {
      description:
        "Invalid request, item content, image or audio, or a modality the collection's model does not embed (invalid_request_error)",
    },
    404: { description: 'No such collection in this project (not_found_error)' },
  };

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/vectors/models',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'List embedding models',
      responses: { 200: { description: 'Models', schema: z.object({ models: z.array(ModelOut) }) } },
      handler: async () => ({ json: vectors.listModels() }),
    }),
    idempotent(
      db,
      defineRoute({
        method: 'POST',
        path: '/v1/vectors/collections',
        auth: 'key',
        tags,
        body: CreateCollectionBody,
        summary: 'Create a collection',
        responses: {
          201: { description: 'Created', schema: CollectionOut },
          400: errorsDoc[400],
          409: { description: 'A collection of that name exists in the project (conflict_error)' },
        },
        handler: async (ctx: RequestContext<CreateCollectionBody>) => ({
          status: 201,
          json: await vectors.createCollection(ctx.principal, ctx.body),
        }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/vectors/collections',
      auth: 'key',
      tags,
      noBody: true,
      summary: "List the project's collections",
      responses: {
        200: {
          description: 'Collections, newest first',
          schema: z.object({ object: z.literal('list'), data: z.array(CollectionOut) }),
        },
      },
      handler: async (ctx) => ({ json: await vectors.listCollections(ctx.principal) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/vectors/collections/:id',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'Collection details',
      responses: { 200: { description: 'Collection', schema: CollectionOut }, 404: errorsDoc[404] },
      handler: async (ctx) => ({ json: await vectors.getCollection(ctx.principal, ctx.params.id!) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/vectors/collections/:id',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'Delete a collection with its items, vectors, index and files',
      responses: {
        200: {
          description: 'Deleted',
          schema: z.object({ id: z.string(), object: z.literal('vectors.collection'), deleted: z.literal(true) }),
        },
        404: errorsDoc[404],
      },
      handler: async (ctx) => ({ json: await vectors.deleteCollection(ctx.principal, ctx.params.id!) }),
    }),
    idempotent(
      db,
      defineRoute({
        method: 'POST',
        path: '/v1/vectors/collections/:id/index',
        auth: 'key',
        tags,
        body: IndexBody,
        bodyLimit: INDEX_BODY_LIMIT,
        summary:
          'Embed and index 1-100 items (each exactly one of image, image_base64, text, audio); an item with the id of one the collection holds replaces it',
        responses: {
          200: {
            description: 'Indexed',
            schema: z.object({ indexed: z.number(), ids: z.array(z.string()), model: z.string(), usage: UsageOut }),
          },
          ...errorsDoc,
          413: { description: 'Body, image or audio over its limit (payload_too_large)' },
          503: { description: 'Models not ready or queue full (overloaded_error)' },
        },
        handler: async (ctx: RequestContext<IndexBody>) => ({
          json: await vectors.indexItems(callerOf(ctx), ctx.params.id!, ctx.body),
        }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/vectors/collections/:id/items',
      auth: 'key',
      tags,
      noBody: true,
      query: ItemsQuery,
      summary: 'List items (limit 1-100, default 20; offset), oldest first, with presigned content URLs for media',
      responses: {
        200: {
          description: 'Items',
          schema: z.object({
            object: z.literal('list'),
            data: z.array(ItemOut),
            total: z.number(),
            limit: z.number(),
            offset: z.number(),
            has_more: z.boolean(),
          }),
        },
        ...errorsDoc,
      },
      handler: async (ctx: RequestContext<unknown, ItemsQuery>) => ({
        json: await vectors.listItems(ctx.principal, ctx.params.id!, ctx.query),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/vectors/collections/:id/items/:item_id',
      auth: 'key',
      tags,
      noBody: true,
      summary: 'One item, with a presigned content URL for media',
      responses: {
        200: { description: 'Item', schema: ItemOut },
        404: { description: 'No such collection in this project, or no such item in it (not_found_error)' },
      },
      handler: async (ctx) => ({ json: await vectors.getItem(ctx.principal, ctx.params.id!, ctx.params.item_id!) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/vectors/collections/:id/items/:item_id',
      auth: 'key',
      tags,
      body: PatchItemBody,
      summary: "Update an item's metadata (JSON merge patch: null removes a key); its vector and content stay",
      responses: {
        200: { description: 'The updated item', schema: ItemOut },
        400: { description: 'Invalid request (invalid_request_error)' },
        404: { description: 'No such collection in this project, or no such item in it (not_found_error)' },
      },
      handler: async (ctx: RequestContext<PatchItemBody>) => ({
        json: await vectors.patchItem(ctx.principal, ctx.params.id!, ctx.params.item_id!, ctx.body),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/vectors/collections/:id/items',
      auth: 'key',
      tags,
      body: DeleteItemsBody,
      summary: 'Delete items by id',
      responses: {
        200: {
          description: 'Deleted count and the ids that were not found',
          schema: z.object({ deleted: z.number(), not_found: z.array(z.string()) }),
        },
        ...errorsDoc,
      },
      handler: async (ctx: RequestContext<DeleteItemsBody>) => ({
        json: await vectors.deleteItems(ctx.principal, ctx.params.id!, ctx.body),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/vectors/collections/:id/search',
      auth: 'key',
      tags,
      body: SearchBody,
      imageUpload: true,
      summary:
        'Nearest items to a query of any modality (exactly one of image, image_base64, text, audio), optionally among the items whose metadata match a filter',
      responses: {
        200: {
          description: 'Results, best first; with group_by "video", videos instead',
          schema: z.object({
            results: z.array(SearchResultOut).optional(),
            videos: z.array(VideoGroupOut).optional(),
            model: z.string(),
            usage: UsageOut,
          }),
        },
        ...errorsDoc,
        503: { description: 'Models not ready or queue full (overloaded_error)' },
      },
      handler: async (ctx: RequestContext<SearchBody>) => ({
        json: ctx.body.group_by
          ? await vectors.searchMoments(callerOf(ctx), ctx.params.id!, ctx.body)
          : await vectors.search(callerOf(ctx), ctx.params.id!, ctx.body),
      }),
    }),
  ];
}
