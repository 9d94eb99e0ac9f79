/**
 * A metric whose label values are typed. prom-client types every label value `string | number`, so a bounded number
 * of series would rest on each caller passing a code; declared with this type, a label takes only the union it
 * names (reason codes, outcomes), and the compiler refuses anything else.
 */
export interface Labelled<L> {
  inc(labels: L, value?: number): void;
}
