// One collection: its details, a quick way to add text items, and search by text or by a dropped image with
// the results as a grid (thumbnails from the presigned content_url, score, metadata).
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Collection, SearchResponse, SearchResult } from '../api/types';
import type { SearchQuery } from '../api/project-api';
import { fmtDateTime, fmtNumber, fmtScore } from '../format';
import { href, onLinkClick } from '../router';
import { ErrorNotice, Loading, Notice, Unavailable, errorMessage, isRouteMissing } from '../components/notice';
import { ImageDropZone } from '../components/image-drop-zone';
import type { V1PageProps } from './tasks-page';

export function CollectionPage(props: V1PageProps & { collectionId: string }) {
  const [col, setCol] = useState<Collection | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = async () => {
    try { setCol(await props.api.collection(props.collectionId)); } catch (e) { if (!props.keyRejected(e)) setError(e); }
  };
  useEffect(() => { void load(); }, [props.api, props.collectionId]);

  const listPath = `${props.basePath}/collections`;
  if (isRouteMissing(error)) return <Unavailable feature="Vector collections" routes="GET /v1/vectors/collections/:id" />;
  if (error != null) return <ErrorNotice error={error} what="the collection" />;
  if (!col) return <Loading what="the collection" />;
  return (
    <>
      <p class="crumbs"><a href={href(listPath)} onClick={(e) => onLinkClick(e, listPath)}>Collections</a> / <span>{col.name}</span></p>
      <h2>{col.name}</h2>
      {col.description && <p>{col.description}</p>}
      <dl class="facts inline">
        <dt>Items</dt><dd data-testid="item-count">{fmtNumber(col.item_count)}</dd>
        <dt>Model</dt><dd>{col.model_id} ({col.dimensions} dimensions, {col.metric})</dd>
        <dt>Created</dt><dd>{fmtDateTime(col.created_at)}</dd>
        <dt>Id</dt><dd><code>{col.id}</code></dd>
      </dl>
      <SearchPanel {...props} />
      <AddTextItems {...props} onAdded={() => void load()} />
    </>
  );
}

function SearchPanel(props: V1PageProps & { collectionId: string }) {
  const [text, setText] = useState('');
  const [topK, setTopK] = useState(12);
  const [query, setQuery] = useState<{ label: string; image?: string } | null>(null);
  const [res, setRes] = useState<SearchResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const search = async (q: SearchQuery, label: { label: string; image?: string }) => {
    setBusy(true);
    setError(null);
    // Old results must not sit under the new query's label while it runs.
    setRes(null);
    setQuery(label);
    try {
      setRes(await props.api.search(props.collectionId, { ...q, top_k: topK }));
    } catch (e) {
      if (!props.keyRejected(e)) { setError(errorMessage(e)); setRes(null); }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="search-title">
      <h3 id="search-title">Search</h3>
      <form class="row" role="search" onSubmit={(e) => { e.preventDefault(); if (text.trim()) void search({ text: text.trim() }, { label: `“${text.trim()}”` }); }}>
        <label for="search-text" class="visually-hidden">Search text</label>
        <input id="search-text" type="search" placeholder="Describe what to find…" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        <label for="search-top-k">Top</label>
        <input id="search-top-k" type="number" min={1} max={100} value={topK} class="narrow" onInput={(e) => setTopK(Math.min(100, Math.max(1, Number((e.target as HTMLInputElement).value) || 10)))} />
        <button type="submit" class="primary" disabled={busy || !text.trim()}>Search</button>
      </form>
      <ImageDropZone disabled={busy} onError={setError} onImage={(uri, name) => void search({ image_base64: uri }, { label: name, image: uri })} />
      {error && <Notice kind="error" title="Search failed">{error}</Notice>}
      {busy && <p class="loading" aria-live="polite">Searching…</p>}
      {res && query && (
        <>
          <p class="muted" aria-live="polite">
            {query.image && <img class="query-thumb" src={query.image} alt="" />}
            {res.results.length} result(s) for {query.label} · model {res.model} · {res.usage.input_tokens} input token(s)
          </p>
          <ResultGrid results={res.results} />
        </>
      )}
    </section>
  );
}

function ResultGrid(props: { results: SearchResult[] }) {
  if (props.results.length === 0) return <p>No items matched.</p>;
  return (
    <ul class="grid" aria-label="Search results">
      {props.results.map((r, i) => (
        <li key={r.id} class="result" data-item-id={r.id}>
          <div class="thumb">
            {r.content_type === 'image' && r.content_url
              ? <img src={r.content_url} alt={`Result ${i + 1}`} loading="lazy" />
              : <span class="thumb-text">{r.text ?? (r.content_type === 'text' ? 'text item' : r.content_type)}</span>}
          </div>
          <p class="score"><strong>{fmtScore(r.score)}</strong> <span class="muted">{r.content_type}</span></p>
          {r.content_type !== 'image' && r.content_url && <p><a href={r.content_url}>Open {r.content_type}</a></p>}
          <dl class="meta">
            {Object.entries(r.metadata ?? {}).map(([k, v]) => (
              <Fragment key={k}><dt>{k}</dt><dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd></Fragment>
            ))}
          </dl>
          <p class="muted id"><code>{r.id}</code></p>
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
    const lines = text.split('\n').map((l) => l.trim()).filter(Boolean).slice(0, 100);
    if (!lines.length) return;
    setBusy(true);
    setMsg(null);
    try {
      const r = await props.api.indexItems(props.collectionId, lines.map((t) => ({ text: t, metadata: { source: 'console' } })));
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
        <textarea id="new-items" rows={4} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        <button type="submit" disabled={busy || !text.trim()}>Index</button>
      </form>
      {msg && <Notice kind={msg.kind}>{msg.text}</Notice>}
    </details>
  );
}
