/**
 * Applies a container contract (src/policy/judge/types.ts): each field of the container is looked up in the
 * contract and judged by its check; a field the contract does not list is refused. Fields are visited in a fixed
 * order (the contract's, then the unknown ones sorted), so the same container always gets the same first problem.
 */
import type { Container } from '../../contract/pod.ts';
import type { ContainerContract, ContractContext, FieldCheck, Problem } from './types.ts';

/** The first problem of `c` under `contract`, as a sentence completing "container X …"; undefined when it holds. */
/** Each contract's fields in order, listed once (contracts are constants of a compiled configuration). */
const fieldsOf = new WeakMap<ContainerContract, ReadonlyArray<readonly [string, FieldCheck]>>();

export function judgeContract(c: Container, contract: ContainerContract, ctx: ContractContext): Problem {
  let fields = fieldsOf.get(contract);
  if (!fields) {
    fields = Object.entries(contract.fields);
    fieldsOf.set(contract, fields);
  }
  for (const [field, check] of fields) {
    if (!(field in c) || c[field] === undefined) {
      const absent = check(undefined, ctx);
      if (absent) return `its ${field} ${absent}`;
      continue;
    }
    const problem = check(c[field], ctx);
    if (problem) return `its ${field} ${problem}`;
  }
  // Listed (and sorted) only for a container that has such a field: checked without allocating first.
  for (const k in c) {
    if (!Object.hasOwn(c, k) || k === 'name' || c[k] === undefined || k in contract.fields) continue;
    const extra = Object.keys(c)
      .filter((x) => x !== 'name' && c[x] !== undefined && !(x in contract.fields))
      .sort();
    return `it sets ${extra.join(', ')}, which ${contract.producer} never sets on this container`;
  }
  return undefined;
}
