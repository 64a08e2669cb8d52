/**
 * About `bytes` of JSON text, with what JSON escapes (quotes, backslashes, control characters),
 * multi-byte characters and surrogate pairs throughout, so that a result split into parts is
 * split inside all of them.
 */
export function bigText(bytes: number): string {
  const unit = 'a"b\\c\u00e9\u{1F600}\n\t<>'; // 19 bytes of JSON
  return unit.repeat(Math.floor(bytes / 19));
}
