#!/usr/bin/env node
// Load log files through the real published JSONL backend and print what it reports, as JSON.
//
//   node reader.mjs FILE...          one result per file (a JSON array, in argument order)
//   node reader.mjs --jobs JOBS.json  JOBS = [{"file": ..., "fork": {"boundary": N, "childId": ...}}]
//
// Each file is copied into a fresh root at the path the backend derives from the header
// (<root>/--<project>--/<encoded-id>/session.jsonl[.zstd]; the encoding is sniffed from the
// magic bytes) and never touched in place. A result is either
//   {accepted: true, header, stored, events, closers, messages, messagesStored, repaired, ...}
// or {accepted: false, error: {name, message, class: "corrupt" | "unsupported"}}.
import { readFileSync } from 'node:fs'
import { SessionFormatUnsupportedError, oracleFor } from './dsh.mjs'

const args = process.argv.slice(2)
let jobs
if (args[0] === '--jobs' && args.length === 2) jobs = JSON.parse(readFileSync(args[1], 'utf8'))
else if (args.length > 0 && !args[0].startsWith('--')) jobs = args.map((file) => ({ file }))
else {
  process.stderr.write('usage: reader.mjs FILE... | reader.mjs --jobs JOBS.json\n')
  process.exit(2)
}

// A failure outside the backend's own refusals (e.g. deriveMessages throwing on a log the store
// accepted) is the library refusing the log too: its full load did not complete.
function refused(file, error) {
  const cls = error instanceof SessionFormatUnsupportedError ? 'unsupported' : 'corrupt'
  const message = String(error?.message ?? error)
  return { file, accepted: false, verdict: cls, error: { name: error?.name ?? typeof error, message, class: cls, stage: 'load' } }
}

const results = []
for (const job of jobs) {
  try {
    results.push(await oracleFor(job.file, { fork: job.fork }))
  } catch (error) {
    results.push(refused(job.file, error))
  }
}
process.stdout.write(JSON.stringify(results))
process.stdout.write('\n')
