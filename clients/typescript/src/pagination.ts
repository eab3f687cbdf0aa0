// Lists: `await list()` is the first page; `for await (const x of list())` walks every item of every page.
// The server pages two ways (docs/video.md, "The task record"; docs/vectors.md): tasks by an opaque cursor
// (`next_cursor`), collection items by offset (`offset`, `total`); both say `has_more`.

export interface Page<T> {
  object?: 'list';
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
  total?: number;
  limit?: number;
  offset?: number;
}

/** Fetches one page given the previous one (null for the first); answers null when there is no next. */
export type PageFetcher<T, P extends Page<T>> = (previous: P | null) => Promise<P> | null;

export class PagePromise<T, P extends Page<T> = Page<T>> implements PromiseLike<P>, AsyncIterable<T> {
  private first: Promise<P> | null = null;

  constructor(private readonly fetchPage: PageFetcher<T, P>) {}

  private firstPage(): Promise<P> {
    this.first ??= this.fetchPage(null)!;
    return this.first;
  }

  then<A = P, B = never>(
    onfulfilled?: ((value: P) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onfulfilled, onrejected);
  }

  /** Every page, the first one included. */
  async *pages(): AsyncGenerator<P> {
    let page: P | null = await this.firstPage();
    while (page) {
      yield page;
      const next: Promise<P> | null = page.has_more && page.data.length > 0 ? this.fetchPage(page) : null;
      page = next ? await next : null;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page, in one array. */
  async toArray(): Promise<T[]> {
    const out: T[] = [];
    for await (const x of this) out.push(x);
    return out;
  }
}

/** A cursor-paged list (tasks): the next page asks for `cursor=<next_cursor>`. */
export function cursorPages<T, P extends Page<T>>(
  fetch: (cursor: string | undefined) => Promise<P>,
): PagePromise<T, P> {
  return new PagePromise<T, P>((prev) => {
    if (!prev) return fetch(undefined);
    return prev.next_cursor ? fetch(prev.next_cursor) : null;
  });
}

/** An offset-paged list (collection items): the next page starts after the items already seen. */
export function offsetPages<T, P extends Page<T>>(
  start: number,
  fetch: (offset: number) => Promise<P>,
): PagePromise<T, P> {
  return new PagePromise<T, P>((prev) => (prev ? fetch((prev.offset ?? start) + prev.data.length) : fetch(start)));
}
