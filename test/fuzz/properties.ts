// Every fuzz property, in the order the suite runs them.
import { binaryProperty } from './props/binary';
import { fuzzProperty, type Runnable } from './property';

export const PROPERTIES: readonly Runnable[] = [
  fuzzProperty(binaryProperty),
];
