/**
 * The help-center corpus shipped with the project (`data/helpcenter/*.md`): parsing, chunking
 * into citable passages, and loading into the store's full-text index.
 *
 * File format: a front-matter block with `title:` and `tags:` (space-separated), then the
 * article body; each paragraph becomes one chunk cited as `<file-slug>.<n>` (n from 1).
 */
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../package-paths';
import type { CorpusSyncReport, HelpChunk, Store } from '../store';

export const HELP_CENTER_DIR = path.join(packageRoot, 'data', 'helpcenter');

export interface HelpArticle {
  slug: string;
  title: string;
  tags: string[];
  paragraphs: string[];
}

export class CorpusError extends Error {
  override readonly name = 'CorpusError';
}

const ARTICLE_SLUG = /^[a-z][a-z0-9-]*$/;
const FRONT_MATTER = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/;

export function parseArticle(slug: string, source: string): HelpArticle {
  if (!ARTICLE_SLUG.test(slug)) throw new CorpusError(`article file name "${slug}" must be a lowercase-kebab slug`);
  const match = FRONT_MATTER.exec(source.replace(/\r\n/g, '\n'));
  if (!match) throw new CorpusError(`article "${slug}" has no front-matter block`);
  const [, header = '', body = ''] = match;
  const fields = new Map(
    header.split('\n').flatMap((line) => {
      const at = line.indexOf(':');
      return at > 0 ? [[line.slice(0, at).trim(), line.slice(at + 1).trim()] as const] : [];
    }),
  );
  const title = fields.get('title');
  if (!title) throw new CorpusError(`article "${slug}" has no title`);
  const paragraphs = body
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length > 0);
  if (paragraphs.length === 0) throw new CorpusError(`article "${slug}" has no body`);
  return { slug, title, tags: (fields.get('tags') ?? '').split(/\s+/).filter(Boolean), paragraphs };
}

/** Every article in the corpus folder, ordered by slug so chunk order never depends on the disk. */
export function readHelpCenter(dir: string = HELP_CENTER_DIR): HelpArticle[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => parseArticle(name.slice(0, -'.md'.length), fs.readFileSync(path.join(dir, name), 'utf8')));
}

export function chunkArticles(articles: readonly HelpArticle[]): HelpChunk[] {
  return articles.flatMap((article) =>
    article.paragraphs.map((text, index) => ({
      key: `${article.slug}.${index + 1}`,
      article_slug: article.slug,
      title: article.title,
      tags: article.tags.join(' '),
      position: index + 1,
      text,
    })),
  );
}

/** Loads the corpus into the store's index; running it again changes nothing. */
export async function loadHelpCenter(store: Store, dir: string = HELP_CENTER_DIR): Promise<CorpusSyncReport> {
  return store.syncHelpCenter(chunkArticles(readHelpCenter(dir)));
}
