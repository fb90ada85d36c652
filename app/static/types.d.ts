// Types of the browser renderer, for TypeScript's checker only (`make typecheck`: tsc --noEmit --allowJs --checkJs);
// never shipped (app/render/assets.py ships the .js and .css files). The run's data shapes are generated into
// contract.d.ts from lade_core/trace.py and app/render/payload.py; the rest are the page's own, and the modules are
// the ones each script registers on `window.Lade`.

// The run's data, generated from the Python declarations (`make contract`: app/render/contract.py).
type Step = import("./contract").StepTrace;
type Draw = import("./contract").Draw;
type MethodRun = import("./contract").MethodRun;
type DraftSettings = import("./contract").DraftConfig;
type Lane = import("./contract").Lane;
type Trace = import("./contract").RunTrace;
type LayoutRow = import("./contract").LayoutRow;
type PoolRow = import("./contract").PoolRow;
type DerivedStep = import("./contract").DerivedStep;
type Derived = import("./contract").Derived;
type Payload = import("./contract").Payload;
type Band = import("./contract").Band;
type BandPart = import("./contract").BandPart;
type Speed = import("./contract").Speed;
type LaneSpeed = import("./contract").LaneSpeed;
type RunMetrics = import("./contract").RunMetrics;
type MetricTerm = import("./contract").MetricTerm;
type PoolState = import("./contract").PoolState;
/** The speed lab's predictions for a run (lade_core/measure/labdata.py lab_run_data, documented there). */
type LabRunData = import("./contract").LabRunData;
type Scenario = import("./contract").Scenario;
type WhyItStops = import("./contract").WhyItStops;
type LiveDelta = import("./contract").LiveDelta;
type LiveAnswer = import("./contract").LiveAnswer;
type Held = import("./contract").Held;
type EngineBoot = import("./contract").EngineBoot;
/** What the server tells the page to show: the stage's value (app/stage.py). */
type StageValue = import("./contract").StageValue;
/** The values the browser shares with the server (app/render/constants.py, generated as lade-constants.js). */
type Constants = import("./contract").Constants;
interface Loaded {
  payload?: Payload;
  delta?: LiveDelta;
  error?: string;
  live?: boolean;
}
interface Source {
  kind: "server" | "site" | "inline";
  load: (handle: string, since: Record<string, number> | null) => Promise<Loaded>;
}

type Run = InstanceType<typeof LadeRun>;
interface Cell {
  level: number;
  col: number;
  pos: number;
  token: number;
  right: boolean;
  earlier: number | undefined;
}
interface WindowCells {
  levels: Cell[][];
  fresh: Cell[];
  full: boolean;
  rightFed: number;
  rightNew: number;
}

/** The boot document, the speed lab's page data with the lesson's extras, and their parts (app/render/boot.py). */
type Boot = import("./contract").Boot;
type GalleryEntry = import("./contract").GalleryEntry;
type SecondRace = import("./contract").SecondRace;
type SecondRaceLane = import("./contract").SecondRaceLane;
type LabPage = import("./contract").LessonLab;
type Numerics = import("./contract").Numerics;
type NumericsRow = import("./contract").NumericsRow;
type ParallelRun = import("./contract").ParallelRun;

type Mode = "lesson" | "explorer" | "lab";
interface LabInputs {
  device: string;
  size: string;
  devices: number;
  batch: number;
}
/** The page's state: everything that decides what is on screen (lade-stage.js `initialState`). */
interface State {
  current: string | null;
  k: number;
  mode: Mode;
  chapter: number;
  /** an embed: a chapter (`lesson`) or a view or group, and the span of steps its slide shows (lade-slide.js) */
  embed: { view?: string; lesson?: boolean; from?: number; to?: number } | null;
  own: string | null;
  answered: { chapter: number; k: number; option: number } | null;
  /** a slide whose question is a second reveal shows it (lade-slide.js) */
  asked: boolean;
  playing: boolean;
  speed: number;
  notice: string;
  live: string | null;
  liveStatus: string;
  /** once the live race is done, the server's sentence on why it overran its expected wait ("": it did not) */
  liveNote: string;
  share: boolean;
  present: boolean;
  theme: Theme;
  lab: LabInputs;
}
/** Light or dark ("system": the system's), and high contrast (lade-theme.js). */
interface Theme {
  scheme: "system" | "light" | "dark";
  contrast: boolean;
}
interface Link {
  run?: string | null;
  step?: number | null;
  view?: string | null;
  lesson?: number;
  mode?: Mode;
  lab?: Partial<LabInputs>;
  present?: boolean;
  /** the theme the address names, or null where it names none (the page's stays) */
  theme: Theme | null;
  /** `?race=1`: "Race it in your browser" open (where the engine's files are beside the page) */
  race?: boolean;
  embed: boolean;
  /** an embed's span of steps, as its snippet writes it */
  from?: number | null;
  to?: number | null;
  notice: string;
}

interface ViewContext {
  run: Run;
  k: number;
  lanes?: string[] | null;
  compact?: boolean;
}
type ViewFn = (ctx: ViewContext) => Node;
interface ChartSeries {
  name: string;
  color: string;
  dash?: string | null;
  points: number[][];
}
interface ChartSpec {
  series: ChartSeries[];
  xLabel: string;
  yLabel: string;
  title?: string;
  summary?: string;
  logX?: boolean;
  width?: number;
  height?: number;
  yMin?: number;
  marker?: number;
  hover?: (x: number) => string;
  extra?: { x: number; y: number; label: string; color: string }[];
  bands?: { name?: string; color: string; points: number[][] }[];
  rules?: { x: number; label: string; color: string }[];
}

/** Where a run opens: a step, its last, its most interesting, or (null, undefined) its opening step. */
type OpenAt = number | "last" | "interesting" | null | undefined;
interface Actions {
  go: (k: number) => void;
  chapter: (n: number, how?: string) => void;
  answer: (option: number) => void;
  explore: () => void;
  open: (handle: string, step: OpenAt) => void;
  teach: () => void;
  sidebar: () => void;
  lab: (patch: Partial<LabInputs>) => void;
  mode: (mode: Mode) => void;
  printLesson: () => void;
}
interface LessonContext {
  run: Run;
  state: State;
  actions: Actions;
  lab: LabPage | null;
  boot: Boot;
  links: { explorer: () => string };
}
interface PageContext {
  run: Run;
  state: State;
  boot: Boot;
  actions: Actions;
  standalone: boolean;
}
/** How a slide fits its frame (Lade.layout.fit): its median and smallest text as drawn, the slide's type, whether it
 * has it, and whether a chapter's question is a second reveal. */
interface Fitted {
  zoom?: number;
  px: number;
  least?: number;
  want: number;
  readable: boolean;
  ask?: boolean;
}
interface ShareContext extends PageContext {
  /** how an embed of a chapter, view or group at step k fits a frame, measured in the page (Lade.layout.measure) */
  measure: (what: string, k: number, width: number, height: number) => Fitted;
}
interface Answer {
  option: number;
  text: string;
  step?: number;
}
interface Prediction {
  question: string;
  options: string[];
  answer: (run: Run, k: number, ctx: LessonContext) => Answer;
}
interface StartRule {
  rule: string;
  test?: (run: Run, s: Step) => boolean;
  at?: (run: Run) => number;
}
/** What `Lade.dom.h` takes as attributes: an `on…` key a listener of its event, `dataset` the element's data
 * attributes, any other an attribute's value (true: present and empty; null, undefined or false: absent). */
type Handlers = {
  [K in keyof GlobalEventHandlersEventMap as `on${K}`]?: (event: GlobalEventHandlersEventMap[K]) => void;
};
type Attrs = Handlers & {
  dataset?: Record<string, string | number>;
  [name: string]:
    | string
    | number
    | boolean
    | null
    | undefined
    | Record<string, string | number>
    | ((event: never) => void);
};
/** What `Lade.dom.h` and `fill` take as a child: a node, text (a number or string), nothing, or a list of them. */
type Kid = Node | string | number | boolean | null | undefined | Kid[];
interface Chapter {
  title: string;
  role: string;
  focus: string[];
  lanes?: string[];
  start: StartRule[];
  text: (run: Run, k: number, ctx: LessonContext) => Kid[];
  predict?: Prediction;
  /** views the chapter shows in their zoomed variant (the lesson, its handout) */
  zoomed?: string[];
  /** the chapter reads its run's lab figures (asked of the run's address when it is shown: Stage.askLab) */
  lab?: boolean;
}

interface LadeNamespace {
  boot?: Boot;
  constants: typeof LadeConstants;
  dom: typeof LadeDom;
  theme: typeof LadeTheme;
  Run: typeof LadeRun;
  charts: typeof LadeCharts;
  notes: typeof LadeNotes;
  views: typeof LadeViews;
  stepViews: typeof LadeStepViews;
  mask: typeof LadeMask;
  lab: typeof LadeLab;
  curves: typeof LadeCurves;
  chapterSpeed: typeof LadeChapterSpeed;
  chapterNumerics: typeof LadeChapterNumerics;
  chapterRelatives: typeof LadeChapterRelatives;
  lesson: typeof LadeLesson;
  lessonView: typeof LadeLessonView;
  page: typeof LadePage;
  links: typeof LadeLinks;
  slide: typeof LadeSlide;
  layout: typeof LadeLayout;
  pictures: typeof LadePictures;
  sources: typeof LadeSources;
  address: typeof LadeAddress;
  frame: typeof LadeFrame;
  print: typeof LadePrint;
  present: typeof LadePresent;
  share: typeof LadeShare;
  keys: typeof LadeKeys;
  focus: typeof LadeFocus;
  host: typeof LadeHost;
  stage: typeof LadeStage;
  engine: typeof LadeEngine;
  weights: typeof LadeWeights;
  forward: typeof LadeForward;
  tokenizer: typeof LadeTokenizer;
  derive: typeof LadeDerive;
  browserRace: typeof LadeBrowserRace;
  raceKeep: typeof LadeRaceKeep;
  raceWords: typeof LadeRaceWords;
  auto: typeof LadeAuto;
  handoff: typeof LadeHandoff;
}
/** The page's stage (lade-stage.js), as the files it hands its jobs to see it. */
type Stage = InstanceType<(typeof LadeStage)["Stage"]>;
interface Window {
  Lade: LadeNamespace;
  ladeStage: Stage;
}
