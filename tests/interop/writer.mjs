#!/usr/bin/env node
// Write real session logs with the published dsh packages, and beside each the oracle: what the
// real library reports when it loads it.
//
//   node writer.mjs OUT_DIR            every scenario × {raw, zstd} × {packed, unpacked}
//   node writer.mjs --child SCENARIO ROOT COMPRESSION PACK    (internal: a crash scenario's
//                                        writer process, which SIGKILLs itself)
//
// OUT_DIR/index.json lists the logs; OUT_DIR/logs/<variant>/<scenario>/ holds the log as the
// writer left it (crashed files are copied before anything loads them), oracle.json, and
// library-repaired.jsonl[.zstd] (the copy after the library's own load-time repair).
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { PACKAGE_VERSIONS, openBackend, oracleFor, publishPrepared } from './dsh.mjs'

const SELF = fileURLToPath(import.meta.url)
const CWD = '/home/dev/shop app/ü'
const MODEL = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' }
const REASONER = { kind: 'model', provider: 'deepseek', model: 'deepseek-reasoner' }
const TOOLS = [
  { name: 'bash', description: 'Run a shell command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
]

/** Appends events the way the agent loop does; `turn` continues from the session's log. */
class Agent {
  constructor(session) {
    this.s = session
    this.turn = session.events.filter((e) => e.type === 'turn/start').length
    this.step = 0
  }
  turnStart() {
    this.turn += 1
    this.step = 0
    return this.s.append('turn/start', { turn: this.turn }).seq
  }
  turnEnd(reason = { kind: 'completed' }) {
    return this.s.append('turn/end', { turn: this.turn, reason }).seq
  }
  stepStart() {
    this.step += 1
    return this.s.append('step/start', { turn: this.turn, step: this.step }).seq
  }
  stepEnd() {
    return this.s.append('step/end', { turn: this.turn, step: this.step }).seq
  }
  user(id, text, source = { kind: 'user' }) {
    return this.s.append('user/message', { id, role: 'user', source, content: [{ type: 'text', text }] }, { surfaceOp: 'append' }).seq
  }
  header(reason, { model = 'deepseek-chat', system = 'You are a careful coding agent.', tools = TOOLS } = {}) {
    return this.s.append('request/header', { header: { config: { provider: 'deepseek', model }, system, tools }, reason }).seq
  }
  context(model = 'deepseek-chat') {
    return this.s.append('request/context', { provider: 'deepseek', model, contextWindow: 131072 }).seq
  }
  chunk(chunk) {
    return this.s.append('assistant/chunk', { turn: this.turn, step: this.step, chunk }).seq
  }
  /** Stream blocks as a provider would (block-start, deltas, block-end), then usage and finish. */
  stream(blocks, { finish = 'stop', usage = { inputTokens: 100, outputTokens: 20 } } = {}) {
    const seqs = []
    blocks.forEach((block, index) => {
      seqs.push(this.chunk({ type: 'block-start', index, blockType: block.type }))
      if (block.type === 'tool-call') {
        const parts = splitText(block.arguments, 4)
        parts.forEach((part, k) => {
          const delta = { type: 'tool-call-delta', index, id: block.id, ...(k === 0 ? { name: block.name } : {}), argumentsDelta: part }
          seqs.push(this.chunk(delta))
        })
      } else {
        for (const part of splitText(block.text, 5)) {
          seqs.push(this.chunk({ type: block.type === 'text' ? 'text-delta' : 'reasoning-delta', index, text: part }))
        }
      }
      seqs.push(this.chunk({ type: 'block-end', index, block }))
    })
    if (usage !== undefined) seqs.push(this.chunk({ type: 'usage', usage }))
    if (finish !== undefined) seqs.push(this.chunk({ type: 'finish', reason: { kind: finish } }))
    return seqs
  }
  assistant(id, content, { seqs, usage, interrupted, source = MODEL } = {}) {
    const data = { turn: this.turn, step: this.step, message: { id, role: 'assistant', content, source } }
    if (usage !== undefined) data.usage = usage
    if (interrupted) data.interrupted = true
    return this.s.append('assistant/message', data, { surfaceOp: 'append', ...(seqs === undefined ? {} : { sourceEventSeqs: seqs }) }).seq
  }
  /** A streamed assistant reply: chunks, then the message citing them. */
  reply(id, blocks, opts = {}) {
    const seqs = this.stream(blocks, opts)
    return this.assistant(id, blocks, { seqs, usage: opts.usage ?? { inputTokens: 100, outputTokens: 20 } })
  }
  call(callId, name, args) {
    return this.s.append('tool/call', { turn: this.turn, step: this.step, callId, name, arguments: args }).seq
  }
  result(callId, callSeq, text, { id = `tr-${callId}`, isError = false, error, meta, step = this.step, turn = this.turn, replace } = {}) {
    const data = {
      turn,
      step,
      message: {
        id,
        role: 'user',
        source: { kind: 'tool', callId },
        content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError }],
      },
    }
    if (error !== undefined) data.error = error
    if (meta !== undefined) data.meta = meta
    // A content-only replacement cites the node it shadows; an appended result cites its call.
    const surfaceOp = replace === undefined ? 'append' : { op: 'replace', start: replace, end: replace }
    const sourceEventSeqs = replace === undefined ? [callSeq] : [replace]
    return this.s.append('tool/result', data, { surfaceOp, sourceEventSeqs }).seq
  }
}

function splitText(text, parts) {
  if (text.length === 0) return ['']
  const size = Math.max(1, Math.ceil(text.length / parts))
  const out = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const toolCall = (id, name, args) => ({ type: 'tool-call', id, name, arguments: JSON.stringify(args) })
const text = (t) => ({ type: 'text', text: t })
const reasoning = (t) => ({ type: 'reasoning', text: t })

/** Deterministic, poorly compressible text so a batch stays large inside a zstd frame too. */
function noise(bytes, seed = 7) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-/'
  let x = seed
  let out = ''
  for (let i = 0; i < bytes; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    out += alphabet[(x >>> 16) % alphabet.length]
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Turns shared by several scenarios. Each flushes at the points an agent loop checkpoints.

/** Turn: reasoning + text + two parallel tool calls (one slow), results in completion order. */
async function turnParallel(a, flush) {
  a.turnStart()
  a.stepStart()
  a.user('u-list', 'List the files and show me the README.')
  a.header('initial')
  a.context()
  await flush()
  a.reply('a-plan', [
    reasoning('The user wants two things; I can run both reads in parallel.'),
    text('Let me look at the workspace.'),
    toolCall('call_ls', 'bash', { cmd: 'ls -la' }),
    toolCall('call_readme', 'read', { path: 'README.md' }),
  ], { finish: 'tool-calls' })
  const ls = a.call('call_ls', 'bash', '{"cmd":"ls -la"}')
  const rd = a.call('call_readme', 'read', '{"path":"README.md"}')
  await flush()
  a.result('call_readme', rd, '# Shop\nA tiny shop.', { meta: { bytes: 20 } })
  await sleep(120) // the slow call
  a.result('call_ls', ls, 'README.md\nshop.py\ntests/')
  a.stepEnd()
  await flush()
  a.stepStart()
  a.s.append('todo/write', { todos: [{ content: 'summarise files', status: 'in_progress' }] })
  a.reply('a-summary', [text('There are three entries: README.md, shop.py and tests/.')])
  a.stepEnd()
  a.turnEnd()
  await flush()
}

/** Turn: a failing tool call, a lone surrogate in output (Node writes it escaped), a retry. */
async function turnFailing(a, flush) {
  a.turnStart()
  a.stepStart()
  a.user('u-test', 'Run the tests.')
  a.reply('a-run', [toolCall('call_pytest', 'bash', { cmd: 'pytest -q' })], { finish: 'tool-calls' })
  const c = a.call('call_pytest', 'bash', '{"cmd":"pytest -q"}')
  await flush()
  a.result('call_pytest', c, 'exit status 1: 1 failed \ud800 (bad byte)', {
    isError: true,
    error: { name: 'ToolExecutionError', code: 'TOOL_FAILED' },
  })
  a.stepEnd()
  a.stepStart()
  a.reply('a-fail', [reasoning('One test fails.'), text('One test fails in tests/test_cart.py.')])
  a.stepEnd()
  a.turnEnd()
  await flush()
}

/** Turn: a model switch, a max-tokens step whose message has empty content (usage host only). */
async function turnMaxTokens(a, flush) {
  a.turnStart()
  a.stepStart()
  a.user('u-long', 'Explain the whole code base in detail.', { kind: 'user' })
  a.header('change', { model: 'deepseek-reasoner' })
  a.context('deepseek-reasoner')
  const seqs = a.stream([], { finish: 'max-tokens', usage: { inputTokens: 900, outputTokens: 8192, reasoningTokens: 8000 } })
  a.assistant('a-empty', [], { seqs, usage: { inputTokens: 900, outputTokens: 8192, reasoningTokens: 8000 }, source: REASONER })
  a.stepEnd()
  a.turnEnd({ kind: 'max-tokens' })
  await flush()
}

/** Turn: cancelled by the user mid-stream: the delivered prefix is an interrupted message. */
async function turnAborted(a, flush) {
  a.turnStart()
  a.stepStart()
  a.user('u-stop', 'Write a long poem.')
  const seqs = a.stream([text('Roses are red,')], { finish: 'aborted', usage: undefined })
  a.assistant('a-poem', [text('Roses are red,')], { seqs, interrupted: true })
  a.stepEnd()
  a.turnEnd({ kind: 'aborted', reason: { kind: 'user' } })
  await flush()
}

/** Turn: one tool call answered (used before compaction). */
async function turnSimpleTool(a, flush, tag, output = 'ok') {
  a.turnStart()
  a.stepStart()
  a.user(`u-${tag}`, `Do step ${tag}.`)
  a.reply(`a-${tag}`, [toolCall(`call_${tag}`, 'bash', { cmd: `echo ${tag}` })], { finish: 'tool-calls' })
  const c = a.call(`call_${tag}`, 'bash', JSON.stringify({ cmd: `echo ${tag}` }))
  const r = a.result(`call_${tag}`, c, output)
  a.stepEnd()
  a.stepStart()
  a.reply(`a-${tag}-done`, [text(`Step ${tag} done.`)])
  a.stepEnd()
  a.turnEnd()
  await flush()
  return { call: c, result: r }
}

// ---------------------------------------------------------------------------------------------
// Scenarios. `run(env)` gets {backend, flush(session), die()}; it returns the session id whose
// log is the artifact (and optional extra facts for the index).

const SCENARIOS = {
  'multi-turn': {
    kind: 'clean',
    async run({ backend }) {
      const s = backend.sessions.create('multi-turn', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnParallel(a, flush)
      await turnFailing(a, flush)
      await turnMaxTokens(a, flush)
      await turnAborted(a, flush)
      return s
    },
  },
  compaction: {
    kind: 'clean',
    async run({ backend }) {
      const s = backend.sessions.create('compaction', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnSimpleTool(a, flush, 'one')
      await turnSimpleTool(a, flush, 'two')
      // Summary compaction between turns: replace every current node so far.
      const nodes = [...s.surface.nodes]
      s.append('compaction/start', { compactionId: 'cmp-1', turn: null })
      s.append('compaction/summary', {
        compactionId: 'cmp-1',
        summary: [text('Steps one and two ran echo.')],
        shadowedRange: { start: nodes[0], end: nodes.at(-1) },
        shadowedSeqs: nodes,
        shadowedTokenCount: 480,
        provider: 'deepseek',
        model: 'deepseek-chat',
      })
      s.append(
        'user/message',
        { id: 'm-summary', role: 'user', source: { kind: 'plugin', plugin: 'compact' }, content: [text('Summary: steps one and two ran echo.')] },
        { surfaceOp: { op: 'replace', start: nodes[0], end: nodes.at(-1) }, sourceEventSeqs: nodes },
      )
      s.append('compaction/end', { compactionId: 'cmp-1', turn: null })
      await flush()
      const three = await turnSimpleTool(a, flush, 'three', noise(4000, 3))
      // Prune inside the next turn: the big result's content is replaced.
      a.turnStart()
      a.stepStart()
      a.user('u-four', 'Continue.')
      s.append('compaction/prune', {
        shadowedRange: { start: three.result, end: three.result },
        shadowedSeqs: [three.result],
        shadowedTokenCount: 900,
      })
      a.result('call_three', three.call, '[output pruned]', { turn: a.turn - 1, step: 1, replace: three.result })
      a.reply('a-four', [text('Continuing.')])
      a.stepEnd()
      a.turnEnd()
      await flush()
      return s
    },
  },
  'fork-child': {
    kind: 'clean',
    async run({ backend }) {
      const parent = backend.sessions.create('fork-parent', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(parent)
      const flush = () => backend.sessions.flush(parent)
      await turnParallel(a, flush)
      const boundary = parent.seq - 1 // the turn/end just written
      await turnFailing(a, flush)
      const child = backend.sessions.fork(parent, boundary, 'fork-child')
      const b = new Agent(child)
      await turnSimpleTool(b, () => backend.sessions.flush(child), 'branch')
      return child
    },
  },
  subagent: {
    kind: 'clean',
    async run({ backend }) {
      const s = backend.sessions.create('sub:agent/α 1', {
        meta: { cwd: CWD, parentSession: 'multi-turn', origin: 'subagent', delegationDepth: 1, agentPreset: 'explore' },
      })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      a.turnStart()
      a.stepStart()
      a.user('u-sub', 'Find where totals are computed.', { kind: 'plugin', plugin: 'subagent-task' })
      a.header('initial', { system: 'You are an exploration subagent.' })
      a.reply('a-sub', [text('In shop.py, function total().')])
      a.stepEnd()
      a.turnEnd()
      await flush()
      return s
    },
  },
  resume: {
    kind: 'clean',
    async run({ backend, reopen }) {
      const s = backend.sessions.create('resume', { meta: { cwd: CWD, delegationDepth: 0 } })
      await turnParallel(new Agent(s), () => backend.sessions.flush(s))
      const next = await reopen() // the writing process is gone: the session is cold
      const live = await publishPrepared(next, 'resume')
      const a = new Agent(live)
      a.turnStart()
      a.stepStart()
      a.header('resume')
      a.user('u-again', 'And now the tests?')
      a.reply('a-again', [text('They pass.')])
      a.stepEnd()
      a.turnEnd()
      await next.sessions.flush(live)
      return live
    },
  },
  'resume-after-crash': {
    kind: 'clean',
    crashFirst: 'crash-dangling-call',
    async run({ reopen }) {
      // The crashed log is loaded by a new process: the library repairs it durably, the resumed
      // session appends session/end-seed, and the conversation goes on.
      const next = await reopen()
      const live = await publishPrepared(next, 'crash-dangling-call')
      const a = new Agent(live)
      a.turnStart()
      a.stepStart()
      a.header('resume')
      a.user('u-after', 'What happened?')
      a.reply('a-after', [text('The process crashed; the deploy outcome is unknown.')])
      a.stepEnd()
      a.turnEnd()
      await next.sessions.flush(live)
      return live
    },
  },
  'crash-dangling-call': {
    kind: 'crash',
    async run({ backend, die }) {
      const s = backend.sessions.create('crash-dangling-call', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnParallel(a, flush)
      a.turnStart()
      a.stepStart()
      a.user('u-deploy', 'Deploy it.')
      a.reply('a-deploy', [text('Deploying.'), toolCall('call_deploy', 'bash', { cmd: './deploy.sh' })], { finish: 'tool-calls' })
      a.call('call_deploy', 'bash', '{"cmd":"./deploy.sh"}')
      await flush() // the tool/call is durable; its result never will be
      return die()
    },
  },
  'crash-not-started': {
    kind: 'crash',
    async run({ backend, die }) {
      const s = backend.sessions.create('crash-not-started', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnFailing(a, flush)
      a.turnStart()
      a.stepStart()
      a.user('u-two', 'Read both files.')
      a.reply('a-two', [toolCall('call_a', 'read', { path: 'a.py' }), toolCall('call_b', 'read', { path: 'b.py' })], {
        finish: 'tool-calls',
      })
      await flush() // the assistant asked for two calls; neither started
      return die()
    },
  },
  'crash-mixed-calls': {
    kind: 'crash',
    async run({ backend, die }) {
      const s = backend.sessions.create('crash-mixed-calls', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      a.turnStart()
      a.stepStart()
      a.user('u-three', 'Three things at once.')
      a.header('initial')
      a.reply('a-three', [
        toolCall('call_1', 'read', { path: '1' }),
        toolCall('call_2', 'bash', { cmd: 'sleep 100' }),
        toolCall('call_3', 'read', { path: '3' }),
      ], { finish: 'tool-calls' })
      const c1 = a.call('call_1', 'read', '{"path":"1"}')
      a.call('call_2', 'bash', '{"cmd":"sleep 100"}')
      a.result('call_1', c1, 'one')
      await flush() // call_1 answered, call_2 started, call_3 never started
      return die()
    },
  },
  'crash-streaming': {
    kind: 'crash',
    async run({ backend, die }) {
      const s = backend.sessions.create('crash-streaming', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnAborted(a, flush)
      a.turnStart()
      a.stepStart()
      a.user('u-essay', 'Write an essay.')
      a.chunk({ type: 'block-start', index: 0, blockType: 'reasoning' })
      for (const t of ['Plan: ', 'intro, ', 'body, ', 'end.']) a.chunk({ type: 'reasoning-delta', index: 0, text: t })
      a.chunk({ type: 'block-end', index: 0, block: reasoning('Plan: intro, body, end.') })
      a.chunk({ type: 'block-start', index: 1, blockType: 'text' })
      for (const t of ['Once ', 'upon ', 'a ', 'time']) a.chunk({ type: 'text-delta', index: 1, text: t })
      await flush() // killed while the model was still streaming
      return die()
    },
  },
  'crash-between-steps': {
    kind: 'crash',
    async run({ backend, die }) {
      const s = backend.sessions.create('crash-between-steps', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      a.turnStart()
      a.stepStart()
      a.user('u-fix', 'Fix the bug.')
      a.reply('a-fix', [toolCall('call_edit', 'bash', { cmd: 'sed -i s/a/b/ x' })], { finish: 'tool-calls' })
      const c = a.call('call_edit', 'bash', '{"cmd":"sed -i s/a/b/ x"}')
      a.result('call_edit', c, 'edited')
      a.stepEnd()
      await flush() // the step closed; the next step never started
      return die()
    },
  },
  'crash-torn-tail': {
    kind: 'crash',
    async run({ backend, die, tearNextWrite }) {
      const s = backend.sessions.create('crash-torn-tail', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnSimpleTool(a, flush, 'before')
      a.turnStart()
      a.stepStart()
      a.user('u-big', 'Dump the database.')
      a.reply('a-big', [toolCall('call_dump', 'bash', { cmd: 'pg_dump shop' })], { finish: 'tool-calls' })
      const c = a.call('call_dump', 'bash', '{"cmd":"pg_dump shop"}')
      await flush()
      // One large batch (a big result, then a streamed reply); the process dies part-way
      // through writing it, leaving complete lines followed by a torn one.
      for (let i = 0; i < 6; i++) a.s.append('todo/write', { todos: [{ content: noise(20000, 100 + i), status: 'pending' }] })
      a.result('call_dump', c, noise(400000, 11))
      a.stepEnd()
      a.stepStart()
      a.reply('a-big-done', [text(noise(3000, 12))])
      a.stepEnd()
      a.turnEnd()
      await tearNextWrite(0.55)
      await flush()
      return die()
    },
  },
  'crash-torn-balanced': {
    kind: 'crash',
    async run({ backend, die, tearNextWrite }) {
      const s = backend.sessions.create('crash-torn-balanced', { meta: { cwd: CWD, delegationDepth: 0 } })
      const a = new Agent(s)
      const flush = () => backend.sessions.flush(s)
      await turnSimpleTool(a, flush, 'only')
      // The next batch is torn inside its first record: the committed log is balanced.
      a.turnStart()
      a.stepStart()
      a.user('u-lost', noise(300, 5))
      await tearNextWrite(0.02)
      await flush()
      return die()
    },
  },
}

const VARIANTS = [
  { name: 'raw-unpacked', compression: 'none', packChunks: false },
  { name: 'raw-packed', compression: 'none', packChunks: true },
  { name: 'zstd-unpacked', compression: 'zstd', packChunks: false },
  { name: 'zstd-packed', compression: 'zstd', packChunks: true },
]

// ---------------------------------------------------------------------------------------------
// Crash child: run a crash scenario in its own process, which kills itself with SIGKILL.

async function tearNextWrite(fraction) {
  // The next FileHandle.writeFile (the backend's append of one batch) writes only the first
  // `fraction` of its bytes, syncs them, and the process is SIGKILLed: a write torn by a crash.
  const probe = await open('/dev/null', 'r')
  const proto = Object.getPrototypeOf(probe)
  await probe.close()
  proto.writeFile = async function tornWriteFile(data) {
    const buffer = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    const cut = Math.max(1, Math.floor(buffer.length * fraction))
    await this.write(buffer, 0, cut)
    await this.sync()
    process.kill(process.pid, 'SIGKILL')
    await sleep(60000)
  }
}

async function childMain([scenario, root, compression, pack]) {
  const backend = await openBackend(root, { compression, packChunks: pack === 'packed' })
  await SCENARIOS[scenario].run({
    backend,
    tearNextWrite,
    die: async () => {
      process.kill(process.pid, 'SIGKILL')
      await sleep(60000)
    },
  })
  throw new Error(`crash scenario ${scenario} returned without dying`)
}

function runCrashChild(scenario, root, variant) {
  const child = spawnSync(
    process.execPath,
    [SELF, '--child', scenario, root, variant.compression, variant.packChunks ? 'packed' : 'unpacked'],
    { encoding: 'utf8', timeout: 60000 },
  )
  if (child.signal !== 'SIGKILL') {
    throw new Error(`crash child ${scenario}/${variant.name} ended with ${child.status}/${child.signal}: ${child.stderr}`)
  }
}

// ---------------------------------------------------------------------------------------------

async function writeAll(outDir) {
  const entries = []
  for (const variant of VARIANTS) {
    const opts = { compression: variant.compression, packChunks: variant.packChunks }
    const suffix = variant.compression === 'zstd' ? 'session.jsonl.zstd' : 'session.jsonl'
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      const root = join(outDir, 'roots', variant.name, name)
      const logDir = join(outDir, 'logs', variant.name, name)
      mkdirSync(logDir, { recursive: true })
      let id
      // A fresh backend is a fresh process: the previous one is disposed first (flushing and
      // retiring its sessions), so a reopened session is cold.
      let current
      const reopen = async () => {
        if (current !== undefined) await current.close()
        current = await openBackend(root, opts)
        return current
      }
      if (scenario.kind === 'crash') {
        runCrashChild(name, root, variant)
        id = name
      } else {
        if (scenario.crashFirst !== undefined) runCrashChild(scenario.crashFirst, root, variant)
        const backend = await reopen()
        const live = await scenario.run({ backend, reopen })
        id = live.id
        await current.close()
      }
      // Locate the artifact with the backend's own locator (no I/O) and copy it before any load.
      const locator = await openBackend(root, opts)
      const source = locator.store.locate({ version: 0, id, createdAt: 0, cwd: CWD }).path
      await locator.close()
      const artifact = join(logDir, suffix)
      copyFileSync(source, artifact)
      entries.push({ name, variant: variant.name, compression: variant.compression, packChunks: variant.packChunks, kind: scenario.kind, id, log: artifact })
    }
  }
  // Oracles: each from a fresh copy (crashed files were copied above, before any load).
  for (const entry of entries) {
    const repaired = join(dirname(entry.log), `library-repaired.${basename(entry.log).replace(/^session\./, '')}`)
    const oracle = await oracleFor(entry.log, { keepRepaired: repaired })
    entry.oracle = join(dirname(entry.log), 'oracle.json')
    entry.libraryRepaired = repaired
    writeFileSync(entry.oracle, JSON.stringify(oracle))
  }
  writeFileSync(join(outDir, 'index.json'), JSON.stringify({ packages: PACKAGE_VERSIONS, node: process.version, logs: entries }, null, 1))
}

const args = process.argv.slice(2)
if (args[0] === '--child') {
  await childMain(args.slice(1))
} else if (args.length === 1) {
  const out = resolve(args[0])
  if (existsSync(join(out, 'index.json'))) throw new Error(`${out} already holds generated logs`)
  mkdirSync(out, { recursive: true })
  await writeAll(out)
} else {
  process.stderr.write('usage: writer.mjs OUT_DIR\n')
  process.exit(2)
}
