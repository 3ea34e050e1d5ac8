// The published upgrade chain as an oracle for `sesstool migrate` (spec §1.3, §13.A).
//
//   node upgrade.mjs --jobs JOBS.json   prints one JSON result per job, in order
//
// A job is {file, to, out} (migrate `file` to version `to` — 2 or 3 — and write the plaintext
// the real chain produces to `out`) or {file, accept} (decode `file`, sesstool's own output,
// through the released codec of its version with the current-version validation).
//
// The chain runs as passes, v0→v2 then v2→v3, each pass's output read back through its codec
// (§13.A item 6: the published chain compiler cannot link the v1→v2 stage to v2→v3). Records
// are encoded by the packages' encoders and written as `JSON.stringify(record) + '\n'` (§9.1).
// Our own code; it only calls the packages' public exports.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { constants as zlibConstants, zstdDecompressSync } from 'node:zlib'

const here = dirname(fileURLToPath(import.meta.url))
const INTEROP_DIR = resolve(process.env.SESSTOOL_INTEROP_DIR ?? join(here, '..', '..', '.interop'))
const requireFromUpgrade = createRequire(join(INTEROP_DIR, 'upgrade', 'package.json'))

async function importInstalled(name) {
  return import(pathToFileURL(requireFromUpgrade.resolve(name)).href)
}

const format = await importInstalled('@deepseek-ai/dsh-session-format')
const v0v1 = await importInstalled('@deepseek-ai/dsh-session-format-v0-to-v1')
const v1v2 = await importInstalled('@deepseek-ai/dsh-session-format-v1-to-v2')
const v2v3 = await importInstalled('@deepseek-ai/dsh-session-format-v2-to-v3')

const migrations = [v0v1.sessionFormatV0ToV1, v1v2.sessionFormatV1ToV2, v2v3.sessionFormatV2ToV3]
const codecs = [
  v0v1.releasedV0SessionFormatCodec,
  v0v1.releasedV1SessionFormatCodec,
  v1v2.releasedV2SessionFormatCodec,
  v2v3.releasedV3SessionFormatCodec,
]
const restorers = {
  2: { artifact: v1v2.restoreReleasedV2Artifact, header: v1v2.assertReleasedV2Header },
  3: { artifact: v2v3.restoreReleasedV3Artifact, header: v2v3.assertReleasedV3Header },
}

/** A catalog whose current version is `current` (2 or 3), as the harness's generated catalog. */
function catalogAt(current) {
  const restore = restorers[current]
  return format.createSessionFormatCatalog({
    currentVersion: current,
    codecs: codecs.slice(0, current + 1),
    currentEncoder: codecs[current],
    migrations: migrations.slice(0, current),
    restoreCurrent: (artifact) => restore.artifact(artifact),
    restoreTransformedCurrent: (artifact) => restore.artifact(artifact),
    restoreCurrentHeader(header) {
      restore.header(header)
      return header
    },
  })
}

const catalogs = { 2: catalogAt(2) }
// The whole chain to v3; run only from v2, where its plan is the single v2→v3 stage (the v1→v2
// stage cannot expose its inherited cut in advance, so v0→v3 in one stream is refused).
const chain3 = format.createSessionFormatChain({
  currentVersion: 3,
  migrations,
  restoreCurrentHeader(header) {
    v2v3.assertReleasedV3Header(header)
    return header
  },
})

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])

/** Length of the complete zstd frame at `start`, walked structurally (§9.2), or -1 when the
 * bytes end inside it. */
function frameLength(bytes, start) {
  let pos = start + 4
  if (pos >= bytes.length) return -1
  const descriptor = bytes[pos++]
  const fcsFlag = descriptor >> 6
  const single = (descriptor & 0x20) !== 0
  const checksum = (descriptor & 0x04) !== 0
  const dictBytes = [0, 1, 2, 4][descriptor & 0x03]
  const fcsBytes = fcsFlag === 0 ? (single ? 1 : 0) : 1 << fcsFlag
  pos += (single ? 0 : 1) + dictBytes + fcsBytes
  for (;;) {
    if (pos + 3 > bytes.length) return -1
    const block = bytes[pos] | (bytes[pos + 1] << 8) | (bytes[pos + 2] << 16)
    pos += 3
    const last = block & 1
    const type = (block >> 1) & 3
    pos += type === 1 ? 1 : block >>> 3
    if (last) break
  }
  if (checksum) pos += 4
  return pos > bytes.length ? -1 : pos - start
}

/** The plaintext of a log: raw bytes, or every complete zstd frame decoded (checksums verified),
 * then a torn last frame as far as it decodes (the backend recovers its complete lines so). */
function plaintext(bytes) {
  if (!bytes.subarray(0, 4).equals(ZSTD_MAGIC)) return bytes
  const parts = []
  let complete = 0
  for (let offset = 0; offset < bytes.length; ) {
    if (!bytes.subarray(offset, offset + 4).equals(ZSTD_MAGIC)) throw new Error(`bad zstd magic at byte ${offset}`)
    const length = frameLength(bytes, offset)
    if (length === -1) {
      parts.push(zstdDecompressSync(bytes.subarray(offset), { finishFlush: zlibConstants.ZSTD_e_flush }))
      break
    }
    parts.push(zstdDecompressSync(bytes.subarray(offset, offset + length)))
    complete = parts.reduce((sum, part) => sum + part.length, 0)
    offset += length
  }
  const text = Buffer.concat(parts)
  // The JSONL backend's physical rule (docs/format.md "Where the published packages decided" 1):
  // the complete frames end on a record boundary, only a torn last frame may end mid-record.
  if (complete > 0 && text[complete - 1] !== 0x0a) throw new Error('complete frame contains a torn JSONL record')
  return text
}

/** Complete lines only: a final record without its newline is a torn tail and is not carried. */
function rows(text) {
  const lines = text.toString('utf8').split('\n')
  lines.pop()
  return lines.map((line) => JSON.parse(line))
}

/** Pass 1 (v0/v1/v2 → v2) through the catalog, as the harness's generated v2 catalog does. */
function toV2(header, body) {
  const catalog = catalogs[2]
  const described = catalog.readHeader(header)
  if (described.status === 'unsupported') throw new format.SessionFormatUnsupportedMigrationError(described.reason)
  if (described.status === 'malformed') throw new format.SessionFormatError(described.reason)
  const restore = catalog.createRestore(header, { recovery: 'recoverable', validation: 'transformed' })
  for (const row of body) restore.decodeRow(row)
  const artifact = restore.finish()
  return [
    catalog.encodeCurrentHeader(artifact.header, artifact.inheritedEventCount),
    ...artifact.events.map((event) => catalog.encodeCurrentEvent(event)),
  ]
}

/** Pass 2 (v2 → v3): the v2 codec decodes the rows and yields the inherited cut, the single
 * v2→v3 stage of the chain transforms the events, the v3 restorer validates the artifact and
 * the v3 codec encodes it. */
function v2ToV3(header, body) {
  const v2codec = codecs[2]
  const v3codec = codecs[3]
  if (format.inspectSessionFormatVersion(header) !== 2) {
    throw new format.SessionFormatError(`pass 2 expects a format v2 header, got ${JSON.stringify(header.version)}`)
  }
  const decoder = v2codec.createDecoder(header, 'recoverable')
  const decoded = new format.SessionFormatEventCollector()
  for (const row of body) decoder.decodeRow(row, decoded)
  const cut = decoder.finish(decoded)
  const migrated = new format.SessionFormatEventCollector()
  const stream = chain3.createStream(decoder.header, cut, migrated)
  for (const event of decoded.values) stream.emitEvent(event)
  const artifact = v2v3.restoreReleasedV3Artifact({
    header: stream.header,
    inheritedEventCount: stream.finish(),
    events: migrated.values,
  })
  return [
    v3codec.encodeHeader(artifact.header, artifact.inheritedEventCount),
    ...artifact.events.map((event) => v3codec.encodeEvent(event)),
  ]
}

/** Decode sesstool's output at its own version with the current-version validation. */
function acceptAt(version, header, body) {
  const catalog = version === 2 ? catalogs[2] : null
  if (catalog !== null) {
    const restore = catalog.createRestore(header, { recovery: 'strict', validation: 'current' })
    for (const row of body) restore.decodeRow(row)
    const artifact = restore.finish()
    return [
      catalog.encodeCurrentHeader(artifact.header, artifact.inheritedEventCount),
      ...artifact.events.map((event) => catalog.encodeCurrentEvent(event)),
    ]
  }
  const v3codec = codecs[3]
  const decoder = v3codec.createDecoder(header, 'strict')
  const decoded = new format.SessionFormatEventCollector()
  for (const row of body) decoder.decodeRow(row, decoded)
  const artifact = v2v3.restoreReleasedV3Artifact({
    header: decoder.header,
    inheritedEventCount: decoder.finish(decoded),
    events: decoded.values,
  })
  return [
    v3codec.encodeHeader(artifact.header, artifact.inheritedEventCount),
    ...artifact.events.map((event) => v3codec.encodeEvent(event)),
  ]
}

const encode = (records) => records.map((record) => JSON.stringify(record) + '\n').join('')

function describe(error) {
  return {
    name: error?.name ?? typeof error,
    message: String(error?.message ?? error),
    class: error instanceof format.SessionFormatUnsupportedMigrationError ? 'unsupported' : 'corrupt',
  }
}

function migrate({ file, to, out }) {
  const [header, ...body] = rows(plaintext(readFileSync(file)))
  let records = toV2(header, body)
  if (to === 3) {
    const [v2header, ...v2body] = rows(Buffer.from(encode(records)))
    records = v2ToV3(v2header, v2body)
  }
  writeFileSync(out, encode(records))
  return { accepted: true, out, events: records.length - 1 }
}

function accept({ file, accept: version }) {
  const [header, ...body] = rows(plaintext(readFileSync(file)))
  const records = acceptAt(version, header, body)
  return { accepted: true, events: records.length - 1, reencoded: encode(records) }
}

const jobsAt = process.argv.indexOf('--jobs')
if (jobsAt === -1) {
  process.stderr.write('usage: upgrade.mjs --jobs JOBS.json\n')
  process.exit(2)
}
const jobs = JSON.parse(readFileSync(process.argv[jobsAt + 1], 'utf8'))
const results = jobs.map((job) => {
  try {
    return job.accept === undefined ? migrate(job) : accept(job)
  } catch (error) {
    return { accepted: false, error: describe(error) }
  }
})
process.stdout.write(JSON.stringify(results))
