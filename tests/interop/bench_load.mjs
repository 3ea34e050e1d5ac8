#!/usr/bin/env node
// `make bench`: time the published library reading one log as a reader does — the file placed
// in a fresh backend root, then `inspect` (stored events plus the balanced view) — and print
// the event count and the seconds spent in `inspect` (the copy is not timed).
//
//   node bench_load.mjs FILE
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { encodingOf, openBackend, sniffHeader } from './dsh.mjs'

const file = process.argv[2]
if (!file) {
  process.stderr.write('usage: bench_load.mjs FILE\n')
  process.exit(2)
}
const head = Buffer.alloc(1 << 16)
const fd = openSync(file, 'r')
const got = readSync(fd, head, 0, head.length, 0)
closeSync(fd)
const sniffed = sniffHeader(head.subarray(0, got))
const id = typeof sniffed.id === 'string' && sniffed.id !== '' ? sniffed.id : 'unknown-session'
const cwd = typeof sniffed.cwd === 'string' && sniffed.cwd !== '' ? sniffed.cwd : undefined
const root = mkdtempSync(join(tmpdir(), 'dsh-bench-'))
try {
  const backend = await openBackend(root, { compression: encodingOf(head.subarray(0, got)) })
  const target = backend.store.locate({ version: 0, id, createdAt: 0, ...(cwd === undefined ? {} : { cwd }) }).path
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(file, target)
  const started = process.hrtime.bigint()
  const inspection = await backend.store.inspect(id)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  process.stdout.write(JSON.stringify({ events: inspection.events.length, seconds }) + '\n')
} finally {
  rmSync(root, { recursive: true, force: true })
}
