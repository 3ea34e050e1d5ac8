// sesstool's stand-in for `AssistantStreamAccumulator`, the only `@deepseek-ai/dsh-llm` export the
// published v1-to-v2 edge imports: no published dsh-llm version (rc.6 … 0.1.1-rc.2) exports it.
// It folds one attempt's timed chunks into the compact records of spec §4.5, in the record key
// order the harness writes. Our own code; setup.sh installs it beside the unpacked packages.

const RUNS = { 'text-delta': 'text-chunks', 'reasoning-delta': 'reasoning-chunks' }

function gapBetween(before, after) {
  const gap = after - before
  return Number.isSafeInteger(gap) && before + gap === after ? gap : undefined
}

function requireIndex(value, what) {
  if (!Number.isSafeInteger(value) || value < 0 || Object.is(value, -0)) {
    throw new TypeError(`${what} index must be a non-negative safe integer`)
  }
}

export class AssistantStreamAccumulator {
  #runs = []

  push({ time, chunk }) {
    if (!Number.isSafeInteger(time)) throw new TypeError(`stream time must be a safe integer, got ${time}`)
    const copy = JSON.parse(JSON.stringify(chunk))
    const last = this.#runs.at(-1)
    const kind = RUNS[copy.type]
    if (kind !== undefined) {
      requireIndex(copy.index, copy.type)
      if (typeof copy.text !== 'string') throw new TypeError(`${copy.type} text must be a string`)
      const gap = last?.type === kind ? gapBetween(last.lastTime, time) : undefined
      if (last?.type === kind && last.index === copy.index && gap !== undefined) {
        last.dt.push(gap)
        last.texts.push(copy.text)
        last.lastTime = time
      } else {
        this.#runs.push({ type: kind, time0: time, index: copy.index, dt: [], texts: [copy.text], lastTime: time })
      }
    } else if (copy.type === 'tool-call-delta') {
      requireIndex(copy.index, copy.type)
      const named = Object.hasOwn(copy, 'name')
      if (typeof copy.id !== 'string' || (named && typeof copy.name !== 'string') || typeof copy.argumentsDelta !== 'string') {
        throw new TypeError('tool-call-delta needs a string id, name and argumentsDelta')
      }
      if (copy.id === '' || copy.name === '') {
        this.#runs.push({ type: 'chunk', time, chunk: copy })
      } else {
        const same =
          last?.type === 'tool-call-chunks' &&
          last.index === copy.index &&
          last.id === copy.id &&
          Object.hasOwn(last, 'name') === named &&
          last.name === copy.name
        const gap = same ? gapBetween(last.lastTime, time) : undefined
        if (gap !== undefined) {
          last.dt.push(gap)
          last.args.push(copy.argumentsDelta)
          last.lastTime = time
        } else {
          const run = { type: 'tool-call-chunks', time0: time, index: copy.index, dt: [], id: copy.id }
          if (named) run.name = copy.name
          run.args = [copy.argumentsDelta]
          run.lastTime = time
          this.#runs.push(run)
        }
      }
    } else if (['block-start', 'block-end', 'usage', 'finish'].includes(copy.type)) {
      this.#runs.push({ type: 'chunk', time, chunk: copy })
    } else {
      throw new TypeError(`unknown stream chunk type ${JSON.stringify(copy.type)}`)
    }
    return { time, chunk: copy }
  }

  snapshot() {
    return this.#runs.map((run) => {
      if (run.type === 'chunk') return { ...run }
      const { lastTime, ...durable } = run
      return JSON.parse(JSON.stringify(durable))
    })
  }
}
