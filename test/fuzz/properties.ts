// Every fuzz property, in the order the suite runs them.
import { binaryProperty } from './props/binary';
import { unaryProperty } from './props/unary';
import { reduceProperty } from './props/reduce';
import { alongProperty, statsProperty } from './props/along';
import { matmulProperty, svdProperty } from './props/linalg';
import { layoutProperty } from './props/layout';
import { joinProperty, methodProperty } from './props/tensor';
import { createProperty, promoteProperty } from './props/creation';
import { randomProperty } from './props/random';
import { astypeProperty, clampProperty, whereProperty } from './props/select';
import { fuzzProperty, type Runnable } from './property';

export const PROPERTIES: readonly Runnable[] = [
  fuzzProperty(binaryProperty),
  fuzzProperty(unaryProperty),
  fuzzProperty(whereProperty),
  fuzzProperty(clampProperty),
  fuzzProperty(astypeProperty),
  fuzzProperty(reduceProperty),
  fuzzProperty(alongProperty),
  fuzzProperty(statsProperty),
  fuzzProperty(matmulProperty),
  fuzzProperty(svdProperty),
  fuzzProperty(layoutProperty),
  fuzzProperty(joinProperty),
  fuzzProperty(methodProperty),
  fuzzProperty(createProperty),
  fuzzProperty(promoteProperty),
  fuzzProperty(randomProperty),
];
