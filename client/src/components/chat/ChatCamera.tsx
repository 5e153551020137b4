/**
 * A small live camera for the chat: "Take photo" attaches the current frame to the question. The camera runs
 * only while this is shown (it stops when the "Use camera" toggle is switched off or the page is left).
 */
import { onMount } from 'solid-js';
import { CameraView } from '../CameraView';
import { createCamera } from '../../lib/camera';
import { attachmentFromFrame } from './attachment';
import type { Attachment } from './conversation';

export function ChatCamera(props: { onPhoto: (a: Attachment) => void; disabled?: boolean }) {
  const camera = createCamera();
  onMount(() => void camera.start());
  const take = () => {
    const frame = camera.capture();
    if (frame) props.onPhoto(attachmentFromFrame(frame.canvas));
  };
  return (
    <div class="chat-camera" data-testid="chat-camera">
      <CameraView camera={camera} label="Camera preview" />
      <button type="button" class="button" onClick={take} disabled={props.disabled || camera.state() !== 'live'}>
        Take photo
      </button>
    </div>
  );
}
