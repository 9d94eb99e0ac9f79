/**
 * Where a CPU sample of the bench server belongs: one of a few parts of answering a review, judged from its whole
 * call stack (leaf first, as `perf script` prints it). The parts are tried in the order listed and the first whose
 * test matches any frame wins, so each sample counts once and the parts add up to the server's CPU: a collection
 * the decision's allocations set off is `gc`, not `decision`. JavaScript frames are named by --perf-basic-prof
 * (`JS:*'mutate file:///…/src/admission/mutate.js:3:23`); a function inlined into its caller leaves no frame, so
 * meshgate's parts are matched by source file, not by function, except in review.js, which decodes as well as
 * answers.
 */

export const PARTS = ['gc', 'decision', 'answer', 'write', 'bodyParse', 'kernelOther', 'runtimeOther'] as const;
export type Part = (typeof PARTS)[number];

/** What each part is, for the table. */
export const PART_LABELS: Record<Part, string> = {
  gc: 'garbage collection (every thread)',
  decision:
    "meshgate's decision: parse, screen, redirect, build (src/admission/mutate|validate, inject, policy, pod, mesh)",
  answer: 'the answer: JSON Patch, base64, AdmissionReview text (encodeResponse, writeResponse)',
  write: 'writing the answer: TLS encrypt, write(2), loopback delivery to the client',
  bodyParse: 'the request body: shape count, JSON.parse',
  kernelOther: 'other kernel: reads, epoll, scheduling',
  runtimeOther: 'other user space: TLS decrypt, HTTP parser, fastify, metrics, event loop',
};

const GC = /Heap::CollectGarbage|Scavenge|MarkCompact|ConcurrentMarking|IncrementalMarking|MinorMarkSweep|Sweeper::/;
const DECISION =
  /\/src\/(admission\/(mutate|validate|handlers|pod-request)|(inject|policy|pod|mesh|facts)\/[\w-]+)\.js/;
const ANSWER = /\/src\/util\/base64-json\.js|'?(encodeResponse|serializeResponse|writeResponse) /;
const WRITE = /handleWriteReq|writeGeneric|writevGeneric|StreamBase::Write|TLSWrap::DoWrite|ksys_write|tcp_sendmsg/;
const BODY = /\/src\/server\/(json-shape|json-body)\.js|JsonParser<|JsonParseInternalizer/;
const TESTS: ReadonlyArray<[Part, RegExp]> = [
  ['gc', GC],
  ['decision', DECISION],
  ['answer', ANSWER],
  ['write', WRITE],
  ['bodyParse', BODY],
];

/** A kernel address, as perf prints it (the leaf frame of a sample taken in the kernel). */
const KERNEL_IP = /^ffffffff/;

/** One sample: its frames as `ip symbol`, leaf first. */
export function classify(frames: readonly string[]): Part {
  for (const [part, test] of TESTS) if (frames.some((f) => test.test(f))) return part;
  return KERNEL_IP.test(frames[0] ?? '') ? 'kernelOther' : 'runtimeOther';
}
