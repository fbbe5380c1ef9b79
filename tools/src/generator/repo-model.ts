/**
 * A virtual agent workspace: files with contents that the simulated agent reads, writes and
 * edits. Edits splice fresh corpus text into the old body (a new, unique version); re-reads and
 * re-saves give byte-identical repeats, like real fleets (43.5% of file bodies are repeats).
 */
import type { BodyKind, Corpus } from "./corpus.js";
import type { Rng } from "./prng.js";
import type { SizeDraw } from "./profile.js";

/** One file of the workspace. */
export interface VirtualFile {
  path: string;
  kind: BodyKind;
  content: string;
  /** Edits so far (versions after the first). */
  revision: number;
}

/** A body emitted in a `file.updated`, remembered so that it can be repeated byte for byte. */
export interface EmittedBody {
  path: string;
  content: string;
}

const DIRS = ["src", "src/journal", "src/state", "server", "server/sentinels", "tests/unit", "plan", "plan/reviews", "docs", "scripts"];
const STEMS = ["writer", "reader", "reducer", "engine", "manifest", "plan", "notes", "review", "migration", "index", "store", "report", "cli", "budget", "loop"];
const EXT_BY_KIND: Record<BodyKind, string> = { markdown: "md", typescript: "ts", python: "py", testlog: "log", grep: "txt", listing: "txt" };
const FILE_KINDS: readonly BodyKind[] = ["markdown", "markdown", "typescript", "typescript", "typescript", "python"];

function revisionMarker(kind: BodyKind, path: string, rev: string): string {
  if (kind === "markdown") return `<!-- ${path} rev ${rev} -->\n`;
  if (kind === "python") return `# ${path} rev ${rev}\n`;
  return `// ${path} rev ${rev}\n`;
}

/** The workspace model. Deterministic for its rng. */
export class RepoModel {
  readonly files: VirtualFile[] = [];
  private readonly byPath = new Map<string, VirtualFile>();
  /** Recently emitted bodies (bounded): the candidates for byte-identical repeats. */
  readonly recent: EmittedBody[] = [];
  private static readonly RECENT_LIMIT = 64;

  constructor(
    private readonly corpus: Corpus,
    private readonly r: Rng,
    /** File sizes (body-heavy: median 6 KB, sigma 1.25, at least 200 B, tail to the cap). */
    private readonly size: SizeDraw = { median: 6000, sigma: 1.25, min: 200, max: Infinity },
  ) {}

  /** A heavy-tailed file size from the profile's draw, tail to `maxBytes` (hundreds of KB). */
  drawSize(maxBytes: number, s: SizeDraw = this.size): number {
    return this.r.logNormal(s.median, s.sigma, s.min, Math.max(s.min, Math.min(s.max, maxBytes)));
  }

  /** Create a new file of a drawn size (capped by `maxBytes`; `size` overrides the workspace's draw). */
  create(maxBytes: number, size?: SizeDraw): VirtualFile {
    const kind = this.r.pick(FILE_KINDS);
    let path = "";
    do {
      path = `${this.r.pick(DIRS)}/${this.r.pick(STEMS)}-${this.r.base36(4)}.${EXT_BY_KIND[kind]}`;
    } while (this.byPath.has(path));
    const bytes = this.drawSize(maxBytes, size);
    const f: VirtualFile = {
      path,
      kind,
      content: revisionMarker(kind, path, this.r.hex(8)) + this.corpus.body(kind, bytes, this.r),
      revision: 0,
    };
    this.files.push(f);
    this.byPath.set(path, f);
    return f;
  }

  /** A random existing file, or a new one when the workspace is empty. */
  pick(maxBytes: number): VirtualFile {
    if (this.files.length === 0 || this.r.chance(0.08)) return this.create(maxBytes);
    // Agents revisit recent files more than old ones.
    const n = this.files.length;
    const i = this.r.chance(0.7) ? n - 1 - Math.floor(this.r.next() * Math.min(n, 12)) : Math.floor(this.r.next() * n);
    return this.files[i];
  }

  /**
   * Edit a file: replace a region with fresh text. Returns `{oldString, newString}` as an Edit
   * tool call would carry. Files over `maxBytes` are trimmed so sizes stay within budget.
   */
  edit(f: VirtualFile, maxBytes: number): { oldString: string; newString: string } {
    const body = f.content.length > maxBytes ? f.content.slice(0, Math.max(200, maxBytes)) : f.content;
    const firstNl = body.indexOf("\n") + 1;
    const start = firstNl + Math.floor(this.r.next() * Math.max(1, body.length - firstNl));
    const len = Math.min(body.length - start, this.r.int(20, 600));
    const oldString = body.slice(start, start + len);
    const newString = this.corpus.body(f.kind, this.r.int(40, 900), this.r);
    f.revision += 1;
    const rest = body.slice(firstNl, start) + newString + body.slice(start + len);
    f.content = revisionMarker(f.kind, f.path, this.r.hex(8)) + rest;
    return { oldString, newString };
  }

  /** Remember an emitted body as a candidate for repeats. */
  remember(f: VirtualFile): void {
    this.recent.push({ path: f.path, content: f.content });
    if (this.recent.length > RepoModel.RECENT_LIMIT) this.recent.shift();
  }

  /** A previously emitted body (recent ones more likely), or null when none yet. */
  repeatCandidate(): EmittedBody | null {
    if (this.recent.length === 0) return null;
    const n = this.recent.length;
    return this.recent[n - 1 - Math.floor(this.r.next() * Math.min(n, 16))];
  }
}
