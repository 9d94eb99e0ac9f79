/**
 * Applies a container contract (src/policy/judge/types.ts): each field of the container is looked up in the
 * contract and judged by its check; a field the contract does not list is refused. Fields are visited in a fixed
 * order (the contract's, then the unknown ones sorted), so the same container always gets the same first problem.
 */
import type { Container } from '../../contract/pod.ts';
import type { ContainerContract, ContractContext, Problem } from './types.ts';

/** The first problem of `c` under `contract`, as a sentence completing "container X …"; undefined when it holds. */
export function judgeContract(c: Container, contract: ContainerContract, ctx: ContractContext): Problem {
  for (const [field, check] of Object.entries(contract.fields)) {
    if (!(field in c) || c[field] === undefined) {
      const absent = check(undefined, ctx);
      if (absent) return `its ${field} ${absent}`;
      continue;
    }
    const problem = check(c[field], ctx);
    if (problem) return `its ${field} ${problem}`;
  }
  const extra = Object.keys(c)
    .filter((k) => k !== 'name' && c[k] !== undefined && !(k in contract.fields))
    .sort();
  if (extra.length > 0) return `it sets ${extra.join(', ')}, which ${contract.producer} never sets on this container`;
  return undefined;
}
