// @ts-check
// The one place the vendored UI library is imported from (htm + Preact, web/vendor/README.md).
export {
  html,
  render,
  useState,
  useEffect,
  useRef,
  useMemo,
  useCallback,
} from '../vendor/htm-preact-standalone.module.js';
