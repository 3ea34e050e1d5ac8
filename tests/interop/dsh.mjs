// Shared helpers for the interop lane: load the pinned published dsh packages from .interop/,
// run a JSONL persistence backend on a root, and ask the real library what it makes of a log
// (the "oracle"). Our own code; it only calls the packages' public API.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { constants as zlibConstants, zstdDecompressSync } from 'node:zlib'

const here = dirname(fileURLToPath(import.meta.url))
export const INTEROP_DIR = resolve(process.env.SESSTOOL_INTEROP_DIR ?? join(here, '..', '..', '.interop'))
const requireFromInstall = createRequire(join(INTEROP_DIR, 'package.json'))

async function importInstalled(name) {
  return import(pathToFileURL(requireFromInstall.resolve(name)).href)
}

const cordis = await importInstalled('@deepseek-ai/cordis')
const session = await importInstalled('@deepseek-ai/dsh-session')
const persistence = await importInstalled('@deepseek-ai/dsh-session-persistence')
const jsonl = await importInstalled('@deepseek-ai/dsh-session-persistence-jsonl')

export const { Context } = cordis
export const SessionStore = session.default
export const {
  Session,
  SESSION_FORMAT_VERSION,
  interruptedTurnClosers,
  foldSurface,
  foldRequestHeader,
  deriveEventMessage,
} = session
export const { SessionFormatUnsupportedError, SessionPersistenceCorruptionError } = persistence
export const { JsonlSessionPersistence } = jsonl

export const PACKAGE_VERSIONS = Object.fromEntries(
  [
    '@deepseek-ai/dsh-session',
    '@deepseek-ai/dsh-session-persistence',
    '@deepseek-ai/dsh-session-persistence-jsonl',
    '@deepseek-ai/cordis',
  ].map((name) => [name, JSON.parse(readFileSync(requireFromInstall.resolve(`${name}/package.json`), 'utf8')).version]),
)

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])

/** Start a context with the session store and a JSONL backend on `root`. */
export async function openBackend(root, { compression = 'zstd', packChunks = true } = {}) {
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  // A long batching window: events reach the disk only at explicit flushes, so every test
  // batch (and every zstd frame) is chosen by the scenario, not by a timer.
  await ctx.plugin(JsonlSessionPersistence, { root, compression, packChunks, writeBatchMaxDelayMs: 600000 })
  return {
    ctx,
    sessions: ctx.sessions,
    store: ctx.sessionPersistence,
    async close() {
      await ctx.fiber.dispose()
    },
  }
}

export function encodingOf(buffer) {
  return buffer.subarray(0, 4).equals(ZSTD_MAGIC) ? 'zstd' : 'none'
}

/** Best-effort id/cwd of a log's header, only to place a copy where the backend looks for it. */
export function sniffHeader(buffer) {
  let text
  try {
    text =
      encodingOf(buffer) === 'zstd'
        ? zstdDecompressSync(buffer, { finishFlush: zlibConstants.ZSTD_e_flush }).toString('utf8')
        : buffer.toString('utf8')
  } catch {
    return {}
  }
  const newline = text.indexOf('\n')
  try {
    const parsed = JSON.parse(newline === -1 ? text : text.slice(0, newline))
    return parsed !== null && typeof parsed === 'object' ? parsed : {}
  } catch {
    return {}
  }
}

const brief = (events) => events.map((event) => [event.seq, event.type])

function describeError(error) {
  const out = { name: error?.name ?? typeof error, message: String(error?.message ?? error) }
  if (error instanceof SessionFormatUnsupportedError) out.class = 'unsupported'
  else out.class = 'corrupt'
  if (error?.cause !== undefined) out.cause = String(error.cause?.message ?? error.cause)
  return out
}

function project(id, meta, events) {
  const live = Session.create(id, events, meta)
  return {
    messages: live.deriveMessages(),
    request: { header: live.requestHeader() ?? null, context: live.requestContext() ?? null },
    surface: foldSurface(events).nodes,
  }
}

/**
 * What the real library reports for one log file: copy it into a fresh root at the path the
 * backend derives from its header, then inspect (non-mutating), readFrom (stored events, no
 * closers), load (commits the library's own repair on the copy) and read it back.
 * `fork` = {boundary, childId}: also fork the (loaded) session with the library's own fork.
 */
export async function oracleFor(file, { fork, keepRepaired } = {}) {
  const bytes = readFileSync(file)
  const compression = encodingOf(bytes)
  const sniffed = sniffHeader(bytes)
  const id = typeof sniffed.id === 'string' && sniffed.id !== '' ? sniffed.id : 'unknown-session'
  const cwd = typeof sniffed.cwd === 'string' && sniffed.cwd !== '' ? sniffed.cwd : undefined
  const root = mkdtempSync(join(tmpdir(), 'dsh-oracle-'))
  const backend = await openBackend(root, { compression })
  try {
    const target = backend.store.locate({ version: 0, id, createdAt: 0, ...(cwd === undefined ? {} : { cwd }) }).path
    mkdirSync(dirname(target), { recursive: true })
    copyFileSync(file, target)
    const result = { file, compression, id, placedAt: target.slice(root.length + 1) }
    let inspection
    try {
      inspection = await backend.store.inspect(id)
    } catch (error) {
      const described = describeError(error)
      return { ...result, accepted: false, verdict: described.class, error: described }
    }
    // The backend's stored prefix: its torn-tail marker says whether load would truncate.
    const physical = await backend.store.loadStored(id)
    const torn =
      physical?.tornMarker === undefined
        ? null
        : { truncateTo: physical.tornMarker.truncateTo, recoveredEvents: physical.tornMarker.recoveredEvents.length }
    const stored = (await backend.store.readFrom(id, 0)).events
    const balanced = inspection.events
    const closers = balanced.slice(stored.length)
    const meta = inspection.meta
    const storedView = project(id, meta, stored)
    const balancedView = project(id, meta, balanced)
    // The library's own durable repair (load commits it on the copy), read back cold.
    await backend.store.load(id)
    const repairedBytes = readFileSync(target)
    if (keepRepaired !== undefined) {
      mkdirSync(dirname(keepRepaired), { recursive: true })
      copyFileSync(target, keepRepaired)
    }
    const after = await openBackend(root, { compression })
    let repaired
    try {
      const reread = await after.store.inspect(id)
      const durable = (await after.store.readFrom(id, 0)).events
      repaired = {
        bytes: repairedBytes.length,
        events: brief(durable),
        pendingClosers: reread.events.length - durable.length,
      }
    } finally {
      await after.close()
    }
    let forked
    if (fork !== undefined) forked = await libraryFork(root, compression, id, fork)
    return {
      ...result,
      accepted: true,
      // The verdict in sesstool's vocabulary (docs/format.md): a torn tail outranks an open turn.
      verdict: torn !== null ? 'torn' : closers.length > 0 ? 'interrupted' : 'clean',
      header: meta,
      torn,
      stored: brief(stored),
      storedEvents: stored,
      events: brief(balanced),
      closers,
      messagesStored: storedView.messages,
      messages: balancedView.messages,
      requestStored: storedView.request,
      surfaceStored: storedView.surface,
      repaired,
      ...(forked === undefined ? {} : { fork: forked }),
    }
  } finally {
    await backend.close()
    rmSync(root, { recursive: true, force: true })
  }
}

/** Make a stored session live again the way a resume does: prepare, then publish it. */
export async function publishPrepared(backend, id) {
  const preparation = await backend.store.prepare(id)
  const live = preparation.session
  const sessions = backend.sessions
  backend.ctx.effect(function* () {
    yield sessions.enter(live)
    sessions.announce(live)
  }, 'interop resume')
  preparation[Symbol.dispose]()
  return live
}

/** The library's own fork of a stored session at `boundary`, persisted and read back. */
async function libraryFork(root, compression, id, { boundary, childId }) {
  const backend = await openBackend(root, { compression })
  try {
    const parent = await publishPrepared(backend, id)
    await backend.sessions.flush(parent)
    let child
    try {
      child = backend.sessions.fork(parent, boundary, childId)
    } catch (error) {
      return { accepted: false, error: { name: error.name, code: error.code, message: error.message } }
    }
    await backend.sessions.flush(child)
    const path = backend.store.locate(child.header).path
    const reread = await openBackend(root, { compression })
    try {
      const inspection = await reread.store.inspect(childId)
      return {
        accepted: true,
        header: inspection.meta,
        events: inspection.events,
        file: path.slice(root.length + 1),
      }
    } finally {
      await reread.close()
    }
  } finally {
    await backend.close()
  }
}
