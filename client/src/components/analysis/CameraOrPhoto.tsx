/**
 * The stage of a page that analyses either the live camera (pipelined) or an uploaded photo with the same engine
 * (recognition, objects): one place for the switch between the two, so both pages hand the same functions to both.
 */
import { Show, splitProps } from 'solid-js';
import { PhotoAnalysis } from './PhotoAnalysis';
import { PipelinedCamera, type PipelinedCameraProps } from './PipelinedCamera';
import type { Source } from './SourceSwitch';

/** The camera's props, less the label (named per page), with what the photo needs. */
export interface CameraOrPhotoProps<T> extends Omit<PipelinedCameraProps<T>, 'label'> {
  source: Source;
  /** PhotoAnalysis's id prefix and empty text. */
  photoId: string;
  emptyText: string;
  /** Analyse the photo again when this changes (a new setting). */
  rerunKey?: unknown;
  /** A new photo was chosen: the page clears the old result. */
  onPhoto: () => void;
  /** The camera video's accessible name. */
  cameraLabel: string;
}

export function CameraOrPhoto<T>(props: CameraOrPhotoProps<T>) {
  // What the photo and the camera are both given.
  const [engine] = splitProps(props, ['ready', 'analyze', 'draw', 'onResult', 'onError']);
  return (
    <Show
      when={props.source === 'camera'}
      fallback={
        <PhotoAnalysis id={props.photoId} emptyText={props.emptyText} rerunKey={props.rerunKey} onPhoto={props.onPhoto} {...engine} />
      }
    >
      <PipelinedCamera label={props.cameraLabel} facingMode={props.facingMode} depth={props.depth} {...engine} />
    </Show>
  );
}
