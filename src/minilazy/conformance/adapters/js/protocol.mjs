// The oracle's process protocol 1.0 (spec/protocol.md) in JavaScript: the value codec and the
// server loop. An adapter is a plain object (see minimal.mjs); `serve(adapter)` answers the
// oracle's requests on stdin/stdout until stdin ends; `adapter.release(obj)`, if present, is
// called when the oracle frees a handle. Node 20, no dependencies.

import { createInterface } from "node:readline";

export const VERSION = "1.0";

// Python's scalar kinds, which JSON (and JavaScript) cannot tell apart: 2 is an int, 2.0 a float.
export class PyFloat { constructor(value) { this.value = value; } }
export class PyComplex { constructor(re, im) { this.re = re; this.im = im; } }
export class Tuple extends Array {}           // a Python tuple (shapes, axes, index keys)
export class Slice { constructor(start, stop, step) { Object.assign(this, { start, stop, step }); } }
export class DType { constructor(name) { this.name = name; } }
export const ELLIPSIS = Symbol("...");
// A NumPy array in flight: dtype name, shape, and its elements as a typed array (C order).
export class NdArray { constructor(dtype, shape, data) { Object.assign(this, { dtype, shape, data }); } }
// An error the adapter raises on purpose, of the Python kind the spec's rules name.
export class PyError extends Error { constructor(type, message) { super(message); this.pyType = type; } }

const TYPED = {
  bool: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  float16: Uint16Array /* raw bits: Node 20 has no Float16Array */, float32: Float32Array,
  float64: Float64Array, complex64: Float32Array /* re, im pairs */, complex128: Float64Array,
};
const PER_ELEMENT = { complex64: 2, complex128: 2 };

/** A JavaScript number as Python's float repr would spell it ("nan", "-0.0", "1e-07"...). */
export function floatText(x) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Object.is(x, -0)) return "-0.0";
  return Number.isInteger(x) && Math.abs(x) < 1e16 ? `${x}.0` : String(x);
}

export function decode(data, deref) {
  if (data === null || typeof data === "boolean" || typeof data === "string") return data;
  if (typeof data === "number") return data;  // an int (a float always comes tagged)
  if (Array.isArray(data)) return data.map((v) => decode(v, deref));
  if ("float" in data) return new PyFloat(Number(data.float.replace("inf", "Infinity").replace("nan", "NaN")));
  if ("complex" in data) return new PyComplex(...data.complex.map((t) => decode({ float: t })));
  if ("tuple" in data) return Tuple.from(data.tuple.map((v) => decode(v, deref)));
  if ("dict" in data) return Object.fromEntries(Object.entries(data.dict).map(([k, v]) => [k, decode(v, deref)]));
  if ("slice" in data) return new Slice(...data.slice.map((v) => decode(v, deref)));
  if ("ellipsis" in data) return ELLIPSIS;
  if ("dtype" in data) return new DType(data.dtype);
  if ("array" in data) {
    const { dtype, shape, data: text } = data.array;
    const bytes = Buffer.from(text, "base64");
    const Typed = TYPED[dtype];
    const copy = new Uint8Array(bytes);  // aligned, owned
    return new NdArray(dtype, shape, new Typed(copy.buffer, 0, copy.byteLength / Typed.BYTES_PER_ELEMENT));
  }
  if ("ref" in data) return deref(data.ref);
  throw new PyError("ValueError", `not a value of the protocol: ${JSON.stringify(data)}`);
}

export function encode(value, ref) {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "bigint") return Number(value);
  // An integer beyond 2**53 is a float64 already (JSON would print 1e+21): say so, exactly.
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : { float: floatText(value) };
  if (value instanceof PyFloat) return { float: floatText(value.value) };
  if (value instanceof PyComplex) return { complex: [floatText(value.re), floatText(value.im)] };
  if (value instanceof Tuple) return { tuple: value.map((v) => encode(v, ref)) };
  if (Array.isArray(value)) return value.map((v) => encode(v, ref));
  if (value instanceof Slice) return { slice: [value.start, value.stop, value.step].map((v) => encode(v, ref)) };
  if (value === ELLIPSIS) return { ellipsis: true };
  if (value instanceof DType) return { dtype: value.name };
  if (value instanceof NdArray) {
    const d = value.data;
    const n = value.shape.reduce((a, b) => a * b, 1) * (PER_ELEMENT[value.dtype] ?? 1);
    if (d.length !== n) throw new PyError("ValueError", `${d.length} elements for shape [${value.shape}] ${value.dtype}`);
    const data = Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString("base64");
    return { array: { dtype: value.dtype, shape: [...value.shape], data }, scalar: false };
  }
  if (value.constructor === Object) {
    return { dict: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v, ref)])) };
  }
  return { ref: ref(value) };  // a tensor, a device: the server keeps it
}

/** The Python kind of an error: the adapter's own mapping first, then PyError, then the class. */
function errorOf(e, adapter) {
  const type = e?.pyType ?? adapter.errorKind?.(e) ?? (e instanceof TypeError ? "TypeError" : "RuntimeError");
  return { type, message: String(e?.message ?? e) };
}

/** Answer the oracle's requests on stdin with `adapter`, one JSON line each, until stdin ends. */
export function serve(adapter) {
  const objects = new Map();
  const numbers = new Map();  // object -> its handle: one handle per object
  let made = 0;
  const ref = (obj) => {
    const n = numbers.get(obj);
    if (n !== undefined) return n;
    objects.set(++made, obj);
    numbers.set(obj, made);
    return made;
  };
  const deref = (n) => {
    if (!objects.has(n)) throw new PyError("ValueError", `no object {'ref': ${n}} here: it was freed, or never made`);
    return objects.get(n);
  };
  const hello = () => ({
    protocol: VERSION, name: adapter.name, version: adapter.version,
    capabilities: adapter.capabilities, methods: adapter.methods ?? [], ops: adapter.ops ?? null,
    dtype_policy: adapter.dtype_policy ?? null,
  });
  const out = (answer) => process.stdout.write(JSON.stringify(answer) + "\n");
  // What the library prints must not reach the protocol's stdout.
  console.log = console.info = console.warn = (...a) => process.stderr.write(a.join(" ") + "\n");
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One request at a time (the client waits for each answer), so an async method may await.
  let queue = Promise.resolve();
  lines.on("line", (line) => { queue = queue.then(() => handle(line)); });
  const handle = async (line) => {
    if (!line.trim()) return;
    let request;
    try {
      request = JSON.parse(line);
    } catch (e) {
      return out({ id: null, error: { type: "ValueError", message: `not JSON: ${e.message}` } });
    }
    const answer = { id: request?.id ?? null };
    try {
      for (const n of request.free ?? []) {  // the adapter may dispose of what it holds
        const obj = objects.get(n);
        numbers.delete(obj);
        objects.delete(n);
        if (obj !== undefined) adapter.release?.(obj);
      }
      if (request.call === "hello") {
        answer.result = hello();
      } else {
        const method = adapter[request.call];
        if (typeof method !== "function") {
          throw new PyError("NotImplementedError", `${adapter.name} has no method '${request.call}'`);
        }
        const args = (request.args ?? []).map((v) => decode(v, deref));
        const kwargs = Object.fromEntries(Object.entries(request.kwargs ?? {}).map(([k, v]) => [k, decode(v, deref)]));
        answer.result = encode(await method.call(adapter, args, kwargs), ref);
      }
    } catch (e) {
      delete answer.result;
      answer.error = errorOf(e, adapter);
    }
    out(answer);
  };
}
