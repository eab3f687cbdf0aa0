// One collection: its details, a quick way to add text items, and search by text or by a dropped image with
// the results as a grid (thumbnails from the presigned content_url, score, metadata). A collection that video
// tasks index into searches by video: each hit is a moment (video, start-end, score, thumbnail) that plays
// its part of the video with that moment's boxes (MomentPlayer).
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Collection, Moment, SearchResponse, SearchResult, VideoGroup } from '../api/types';
import type { SearchQuery } from '../api/project-api';
import { fmtClock, fmtDateTime, fmtNumber, fmtScore } from '../format';
import { href, onLinkClick } from '../router';
import { ErrorNotice, Loading, Notice, Unavailable, errorMessage, isRouteMissing } from '../components/notice';
import { ImageDropZone } from '../components/image-drop-zone';
import { MomentPlayer } from '../components/moment-player';
import type { V1PageProps } from './tasks-page';

export function CollectionPage(props: V1PageProps & { collectionId: string }) {
  const [col, setCol] = useState<Collection | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = async () => {
    try {
      setCol(await props.api.collection(props.collectionId));
    } catch (e) {
      if (!props.keyRejected(e)) setError(e);
    }
  };
  useEffect(() => {
    void load();
  }, [props.api, props.collectionId]);

  const listPath = `${props.basePath}/collections`;
  if (isRouteMissing(error))
    return <Unavailable feature="Vector collections" routes="GET /v1/vectors/collections/:id" />;
  if (error != null) return <ErrorNotice error={error} what="the collection" />;
  if (!col) return <Loading what="the collection" />;
  return (
    <>
      <p class="crumbs">
        <a href={href(listPath)} onClick={(e) => onLinkClick(e, listPath)}>
          Collections
        </a>{' '}
        / <span>{col.name}</span>
      </p>
      <h2>{col.name}</h2>
      {col.description && <p>{col.description}</p>}
      <dl class="facts inline">
        <dt>Items</dt>
        <dd data-testid="item-count">{fmtNumber(col.item_count)}</dd>
        <dt>Model</dt>
        <dd>
          {col.model_id} ({col.dimensions} dimensions, {col.metric})
        </dd>
        <dt>Created</dt>
        <dd>{fmtDateTime(col.created_at)}</dd>
        <dt>Id</dt>
        <dd>
          <code>{col.id}</code>
        </dd>
      </dl>
      <SearchPanel {...props} />
      <AddTextItems {...props} onAdded={() => void load()} />
    </>
  );
}

/** Whether an item is a moment a video task's index step wrote (docs/moments.md). */
function isMomentItem(metadata: Record<string, unknown>): boolean {
  return typeof metadata.task_id === 'string' && (metadata.kind === 'segment' || metadata.kind === 'track');
}

function SearchPanel(props: V1PageProps & { collectionId: string }) {
  const [text, setText] = useState('');
  const [topK, setTopK] = useState(12);
  const [filterText, setFilterText] = useState('');
  // Collections that hold video moments search by video (moments merged); null: not known yet.
  const [byVideo, setByVideo] = useState<boolean | null>(null);
  const [query, setQuery] = useState<{ label: string; image?: string } | null>(null);
  const [res, setRes] = useState<SearchResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [playing, setPlaying] = useState<Moment | null>(null);

  // A look at the first items tells whether video tasks index into this collection.
  useEffect(() => {
    let gone = false;
    props.api.items(props.collectionId, 20).then(
      (l) => {
        if (!gone) setByVideo((v) => v ?? l.data.some((it) => isMomentItem(it.metadata ?? {})));
      },
      () => {
        if (!gone) setByVideo((v) => v ?? false);
      },
    );
    return () => {
      gone = true;
    };
  }, [props.api, props.collectionId]);

  const search = async (q: SearchQuery, label: { label: string; image?: string }) => {
    let filter: Record<string, unknown> | undefined;
    if (filterText.trim()) {
      try {
        filter = JSON.parse(filterText) as Record<string, unknown>;
        if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) throw new Error('not an object');
      } catch {
        setError('The filter must be a JSON object, e.g. {"class": "car"} or {"zone:gate": true}.');
        return;
      }
    }
    setBusy(true);
    setError(null);
    // Old results must not sit under the new query's label while it runs.
    setRes(null);
    setPlaying(null);
    setQuery(label);
    try {
      setRes(
        await props.api.search(props.collectionId, {
          ...q,
          top_k: topK,
          ...(filter ? { filter } : {}),
          ...(byVideo ? { group_by: 'video' as const } : {}),
        }),
      );
    } catch (e) {
      if (!props.keyRejected(e)) {
        setError(errorMessage(e));
        setRes(null);
      }
    } finally {
      setBusy(false);
    }
  };
  const play = (m: Moment) => {
    setPlaying(m);
    requestAnimationFrame(() => document.querySelector('.moment-player')?.scrollIntoView({ block: 'nearest' }));
  };

  return (
    <section class="panel" aria-labelledby="search-title">
      <h3 id="search-title">Search</h3>
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) void search({ text: text.trim() }, { label: `“${text.trim()}”` });
        }}
      >
        <label for="search-text" class="visually-hidden">
          Search text
        </label>
        <input
          id="search-text"
          type="search"
          placeholder="Describe what to find…"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        <label for="search-top-k">Top</label>
        <input
          id="search-top-k"
          type="number"
          min={1}
          max={100}
          value={topK}
          class="narrow"
          onInput={(e) => setTopK(Math.min(100, Math.max(1, Number((e.target as HTMLInputElement).value) || 10)))}
        />
        <button type="submit" class="primary" disabled={busy || !text.trim()}>
          Search
        </button>
      </form>
      <div class="row">
        <label for="search-filter">Filter</label>
        <input
          id="search-filter"
          type="text"
          placeholder='{"class": "car"}'
          value={filterText}
          onInput={(e) => setFilterText((e.target as HTMLInputElement).value)}
        />
        <label class="check">
          <input
            type="checkbox"
            checked={byVideo === true}
            onChange={(e) => setByVideo((e.target as HTMLInputElement).checked)}
          />{' '}
          Moments by video
        </label>
      </div>
      <ImageDropZone
        disabled={busy}
        onError={setError}
        onImage={(uri, name) => void search({ image_base64: uri }, { label: name, image: uri })}
      />
      {error && (
        <Notice kind="error" title="Search failed">
          {error}
        </Notice>
      )}
      {busy && (
        <p class="loading" aria-live="polite">
          Searching…
        </p>
      )}
      {res && query && (
        <>
          <p class="muted" aria-live="polite">
            {query.image && <img class="query-thumb" src={query.image} alt="" />}
            {res.videos
              ? `${res.videos.length} video(s), ${res.videos.reduce((n, v) => n + v.moments.length, 0)} moment(s)`
              : `${res.results?.length ?? 0} result(s)`}{' '}
            for {query.label} · model {res.model} · {res.usage.input_tokens} input token(s)
          </p>
          {playing && (
            <MomentPlayer
              key={`${playing.task_id}:${playing.stream_offset}:${playing.end_ms}`}
              api={props.api}
              moment={playing}
              basePath={props.basePath}
              keyRejected={props.keyRejected}
              onClose={() => setPlaying(null)}
            />
          )}
          {res.videos ? (
            <MomentList videos={res.videos} onPlay={play} />
          ) : (
            <ResultGrid results={res.results ?? []} onPlay={play} />
          )}
        </>
      )}
    </section>
  );
}

function momentLabel(m: Moment): string {
  return `${m.video} from ${fmtClock(m.start_ms)} to ${fmtClock(m.end_ms)}`;
}

function MomentList(props: { videos: VideoGroup[]; onPlay(m: Moment): void }) {
  if (props.videos.length === 0) return <p>No moments matched.</p>;
  return (
    <ul class="video-groups" aria-label="Moments">
      {props.videos.map((v) => (
        <li key={v.video} class="video-group" data-video={v.video}>
          <h4>
            <span class="video-name">{v.video}</span>{' '}
            <span class="muted">
              best {fmtScore(v.score)} · {v.moments.length} moment(s)
            </span>
          </h4>
          <ul class="grid">
            {v.moments.map((m) => (
              <li
                key={m.item_ids[0]}
                class="result moment"
                data-task-id={m.task_id}
                data-start-ms={m.start_ms}
                data-end-ms={m.end_ms}
                data-stream-offset={m.stream_offset}
              >
                <button
                  type="button"
                  class="thumb"
                  aria-label={`Play ${momentLabel(m)}`}
                  onClick={() => props.onPlay(m)}
                >
                  {m.thumbnail_url ? (
                    <img src={m.thumbnail_url} alt="" loading="lazy" />
                  ) : (
                    <span class="thumb-text">no picture</span>
                  )}
                </button>
                <p class="score">
                  <strong>{fmtScore(m.score)}</strong>{' '}
                  <span class="muted">
                    {fmtClock(m.start_ms)}–{fmtClock(m.end_ms)}
                  </span>
                </p>
                <p class="muted">
                  {m.kind === 'track'
                    ? `track #${m.track_id ?? '?'}${m.class ? ` · ${m.class}` : ''}`
                    : m.item_ids.length > 1
                      ? `${m.item_ids.length} segments`
                      : 'segment'}
                </p>
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

function ResultGrid(props: { results: SearchResult[]; onPlay(m: Moment): void }) {
  if (props.results.length === 0) return <p>No items matched.</p>;
  return (
    <ul class="grid" aria-label="Search results">
      {props.results.map((r, i) => (
        <li key={r.id} class="result" data-item-id={r.id}>
          <div class="thumb">
            {r.content_type === 'image' && r.content_url ? (
              <img src={r.content_url} alt={`Result ${i + 1}`} loading="lazy" />
            ) : (
              <span class="thumb-text">{r.text ?? (r.content_type === 'text' ? 'text item' : r.content_type)}</span>
            )}
          </div>
          <p class="score">
            <strong>{fmtScore(r.score)}</strong> <span class="muted">{r.content_type}</span>
          </p>
          {r.moment && (
            <p>
              <button
                type="button"
                class="small"
                aria-label={`Play ${momentLabel(r.moment)}`}
                onClick={() => props.onPlay(r.moment!)}
              >
                Play {fmtClock(r.moment.start_ms)}–{fmtClock(r.moment.end_ms)}
              </button>
            </p>
          )}
          {r.content_type !== 'image' && r.content_url && (
            <p>
              <a href={r.content_url}>Open {r.content_type}</a>
            </p>
          )}
          <dl class="meta">
            {Object.entries(r.metadata ?? {}).map(([k, v]) => (
              <Fragment key={k}>
                <dt>{k}</dt>
                <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
              </Fragment>
            ))}
          </dl>
          <p class="muted id">
            <code>{r.id}</code>
          </p>
        </li>
      ))}
    </ul>
  );
}

function AddTextItems(props: V1PageProps & { collectionId: string; onAdded(): void }) {
  const [text, setText] = useState('');
  const [msg, setMsg] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const lines = text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(0, 100);
    if (!lines.length) return;
    setBusy(true);
    setMsg(null);
    try {
      const r = await props.api.indexItems(
        props.collectionId,
        lines.map((t) => ({ text: t, metadata: { source: 'console' } })),
      );
      setMsg({ kind: 'success', text: `Indexed ${r.indexed} item(s).` });
      setText('');
      props.onAdded();
    } catch (err) {
      if (!props.keyRejected(err)) setMsg({ kind: 'error', text: errorMessage(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="panel">
      <summary>Add text items</summary>
      <form onSubmit={submit}>
        <label for="new-items">One item per line (up to 100)</label>
        <textarea
          id="new-items"
          rows={4}
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" disabled={busy || !text.trim()}>
          Index
        </button>
      </form>
      {msg && <Notice kind={msg.kind}>{msg.text}</Notice>}
    </details>
  );
}
